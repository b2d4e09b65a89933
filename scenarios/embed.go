// Package scenarios holds Savanna's bundled scenario files, embedded into
// simrun so that `simrun run quickstart` works from any directory.
package scenarios

import (
	"embed"
	"io/fs"
	"sort"
	"strings"
)

//go:embed *.yaml
var files embed.FS

// FS returns the bundled scenario files.
func FS() fs.FS { return files }

// Names returns the bundled scenarios' names (file names without .yaml),
// sorted.
func Names() []string {
	entries, _ := fs.ReadDir(files, ".")
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".yaml") {
			names = append(names, strings.TrimSuffix(e.Name(), ".yaml"))
		}
	}
	sort.Strings(names)
	return names
}

// Read returns a bundled scenario's bytes by name (with or without .yaml).
func Read(name string) ([]byte, error) {
	return fs.ReadFile(files, strings.TrimSuffix(name, ".yaml")+".yaml")
}
