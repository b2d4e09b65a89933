package zlibtest_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// root is the checkout: this package is dropin/zlibtest.
var root, _ = filepath.Abs("../..")

// needTools skips a spec on a machine without the C toolchain.
func needTools() {
	for _, t := range []string{"gcc", "objdump"} {
		if _, err := exec.LookPath(t); err != nil {
			Skip(t + " not installed (apt-get install -y gcc binutils zlib1g-dev)")
		}
	}
	if _, err := os.Stat("/usr/include/zlib.h"); err != nil {
		Skip("zlib.h not installed (apt-get install -y zlib1g-dev)")
	}
}

func build(out string, extra ...string) {
	cmd := exec.Command(filepath.Join(root, "dropin", "build"), append([]string{out}, extra...)...)
	cmd.Dir = root
	b, err := cmd.CombinedOutput()
	Expect(err).NotTo(HaveOccurred(), "dropin/build: %s", b)
}

// zlibcheck runs the C program with env added and returns its output and
// exit code.
func zlibcheck(bin string, env []string, args ...string) (string, int) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	code := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		Expect(ok).To(BeTrue(), "zlibcheck: %v", err)
		code = ee.ExitCode()
	}
	return out.String(), code
}

// stats is the part of the drop-in's counters the specs look at.
type stats struct {
	StreamsShim   uint64            `json:"streams_shim"`
	StreamsSystem map[string]uint64 `json:"streams_system"`
	Refused       map[string]uint64 `json:"refused"`
	ShimBytesIn   uint64            `json:"shim_bytes_in"`
	GoUnusable    bool              `json:"go_unusable"`
	Shim          struct {
		Service string `json:"service"`
		Stats   struct {
			HWRequests uint64            `json:"hw_requests"`
			Fallbacks  map[string]uint64 `json:"fallbacks"`
		} `json:"stats"`
	} `json:"shim"`
}

func statsLine(out string) stats {
	var s stats
	for _, l := range strings.Split(out, "\n") {
		if j, ok := strings.CutPrefix(l, "stats: "); ok {
			Expect(json.Unmarshal([]byte(j), &s)).To(Succeed())
			return s
		}
	}
	Fail("no stats line in:\n" + out)
	return s
}

func statsFile(path string) []stats {
	f, err := os.Open(path)
	Expect(err).NotTo(HaveOccurred())
	defer f.Close()
	var all []stats
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		var s stats
		Expect(json.Unmarshal(sc.Bytes(), &s)).To(Succeed(), sc.Text())
		all = append(all, s)
	}
	return all
}

var _ = Describe("the libz.so.1 drop-in", Ordered, func() {
	var out string

	BeforeAll(func() {
		needTools()
		out = GinkgoT().TempDir()
		build(out)
	})

	It("passes zlib's behaviour on the system zlib (the C program's own check)", func() {
		o, code := zlibcheck(filepath.Join(out, "zlibcheck"), nil)
		Expect(o).To(ContainSubstring("drop-in absent"))
		Expect(code).To(Equal(0), o)
		Expect(o).NotTo(ContainSubstring("FAIL"))
	})

	It("passes it on the drop-in, with deflate served by the shim on the simulated device", func() {
		sf := filepath.Join(GinkgoT().TempDir(), "stats.jsonl")
		o, code := zlibcheck(filepath.Join(out, "zlibcheck"), []string{"LD_LIBRARY_PATH=" + out, "SAVANNA_ZLIB_STATS=" + sf})
		Expect(o).To(ContainSubstring("drop-in loaded"))
		Expect(code).To(Equal(0), o)
		s := statsLine(o)
		Expect(s.StreamsShim).To(BeNumerically(">", 300))
		Expect(s.Shim.Service).To(Equal("simulated-c62x"))
		Expect(s.Shim.Stats.HWRequests).To(BeNumerically(">", 0))
		// Only the stated reasons send a stream to the system zlib: small
		// windows, and a dictionary or gzip header given before data.
		for k, v := range s.StreamsSystem {
			if k != "window_bits" && k != "dictionary" && k != "gzip_header" {
				Expect(v).To(BeZero(), "streams_system.%s", k)
			}
		}
		Expect(s.StreamsSystem["window_bits"]).To(BeNumerically(">", 0))
		Expect(s.Refused["copy_after_data"]).To(BeEquivalentTo(1))
		// The fork check's child: a new stream went to the system zlib,
		// the inherited one was refused, and nothing hung.
		var child *stats
		for _, l := range statsFile(sf) {
			if l.GoUnusable {
				child = &l
			}
		}
		Expect(child).NotTo(BeNil(), "no line from the forked child")
		Expect(child.StreamsSystem["forked_after_go"]).To(BeEquivalentTo(1))
		Expect(child.Refused["orphan_after_fork"]).To(BeEquivalentTo(1))
	})

	It("forwards everything to the system zlib with SAVANNA_ZLIB_SHIM=0", func() {
		o, code := zlibcheck(filepath.Join(out, "zlibcheck"), []string{"LD_LIBRARY_PATH=" + out, "SAVANNA_ZLIB_SHIM=0"}, "--quick")
		Expect(code).To(Equal(0), o)
		s := statsLine(o)
		Expect(s.StreamsShim).To(BeZero())
		Expect(s.StreamsSystem["disabled"]).To(BeNumerically(">", 300))
	})

	It("passes under AddressSanitizer, C paths alone and with the Go shim", func() {
		build(out, "--asan")
		bin := filepath.Join(out, "asan", "zlibcheck")
		lib := []string{"LD_LIBRARY_PATH=" + filepath.Join(out, "asan"), "SAVANNA_ZLIBGO=" + filepath.Join(out, "libsavanna_zlibgo.so")}
		o, code := zlibcheck(bin, append(lib, "SAVANNA_ZLIB_SHIM=0"), "--quick")
		Expect(code).To(Equal(0), o)
		Expect(o).NotTo(ContainSubstring("ERROR: AddressSanitizer"))
		Expect(statsLine(o).StreamsSystem["disabled"]).To(BeNumerically(">", 0))
		// With Go's runtime in the process, LeakSanitizer cannot stop its
		// threads ("not suspended") and leak reports would be noise.
		o, code = zlibcheck(bin, append(lib, "ASAN_OPTIONS=detect_leaks=0"), "--quick")
		Expect(code).To(Equal(0), o)
		Expect(o).NotTo(ContainSubstring("ERROR: AddressSanitizer"))
		Expect(statsLine(o).StreamsShim).To(BeNumerically(">", 0))
	})
})
