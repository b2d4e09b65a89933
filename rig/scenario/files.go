package scenario

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/savanna-sim/savanna/internal/costops"
	"github.com/savanna-sim/savanna/internal/yamlstrict"
	"github.com/savanna-sim/savanna/sim/cost"
)

// Options change how a scenario file is loaded.
type Options struct {
	// AllowPaths are folders, besides the scenario's own, from which it
	// may read the files it names (cost.file): simrun's --allow-path.
	AllowPaths []string
}

// readLimited reads a regular file of at most max bytes, so that neither
// a scenario nor a file it names can make Savanna read without bound (a
// FIFO, /dev/zero, a multi-gigabyte log).
func readLimited(path string, max int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("not a regular file")
	}
	data, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("larger than %d bytes, the most Savanna reads (MaxFileBytes; docs/scenarios.md, Limits)", max)
	}
	return data, nil
}

// folders resolves the scenario's folder and the allowed ones (absolute,
// symlinks followed), the places its files may be read from.
func folders(path string, allow []string) (dir string, allowed []string, err error) {
	dir, err = realPath(filepath.Dir(path))
	if err != nil {
		// A bundled scenario read from the binary has no folder; it
		// may still read from an allowed one.
		dir = ""
	}
	for _, a := range allow {
		r, err := realPath(a)
		if err != nil {
			return "", nil, fmt.Errorf("--allow-path %s: %w", a, err)
		}
		allowed = append(allowed, r)
	}
	return dir, allowed, nil
}

func realPath(p string) (string, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	return filepath.EvalSymlinks(abs)
}

// within reports whether path is dir or below it; both are resolved.
func within(path, dir string) bool {
	if dir == "" {
		return false
	}
	rel, err := filepath.Rel(dir, path)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator))
}

// ResolveFile resolves a file the scenario names (cost.file): relative
// to the scenario's folder, with symlinks and .. followed, and refused
// when it lands outside that folder and every allowed one (Options
// AllowPaths), so that a scenario from elsewhere cannot read the host's
// files (/etc/shadow) into an error message or a model.
func (s *Scenario) ResolveFile(name string) (string, error) {
	p := name
	if !filepath.IsAbs(p) {
		p = filepath.Join(filepath.Dir(s.Path), p)
	}
	real, err := realPath(p)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return "", fmt.Errorf("%s: %w", name, err)
	}
	if within(real, s.dir) {
		return real, nil
	}
	for _, d := range s.allowed {
		if within(real, d) {
			return real, nil
		}
	}
	folder := "the scenario's folder " + s.dir
	if s.dir == "" {
		folder = "a bundled scenario's (it has no folder)"
	}
	return "", fmt.Errorf("%s is %s, outside %s; a scenario reads files from its own folder only, unless simrun is given --allow-path DIR", name, real, folder)
}

// LoadCost reads the cost-model file a host's cost.file names. Its
// errors never quote the file's text: a file that is not a cost model is
// named with the line and the kind of problem only, and a cost model's
// own errors keep only the keys that name known operations.
func (s *Scenario) LoadCost(name string) (*cost.Model, error) {
	path, err := s.ResolveFile(name)
	if err != nil {
		return nil, err
	}
	data, err := readLimited(path, MaxFileBytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	// The strict structure first, opaquely: a file that is not a cost
	// model at all must not reach cost.Parse's errors, which quote.
	var f cost.File
	if err := yamlstrict.Decode(path, data, &f); err != nil {
		return nil, yamlstrict.Opaque(err)
	}
	m, err := cost.For(costops.Table()).Parse(path, data)
	if err != nil {
		return nil, errors.New(redactQuoted(err.Error()))
	}
	return m, nil
}

var quotedRE = regexp.MustCompile(`"[^"]*"`)

// redactQuoted replaces every quoted string of a cost model's error but
// the key paths of known operations ("costs.tcp_rx.unit") with "…".
func redactQuoted(msg string) string {
	ops := costops.Table()
	return quotedRE.ReplaceAllStringFunc(msg, func(q string) string {
		k := strings.Trim(q, `"`)
		if k == "version" || k == "costs" {
			return q
		}
		if rest, ok := strings.CutPrefix(k, "costs."); ok {
			op, field, _ := strings.Cut(rest, ".")
			if _, known := ops.Lookup(op); known && (field == "" || field == "value" || field == "unit" || field == "source" ||
				field == "uncertainty" || field == "spread" || field == "spread_source") {
				return q
			}
		}
		return `"…"`
	})
}
