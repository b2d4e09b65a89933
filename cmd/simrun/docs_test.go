package main

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/scenarios"
)

// docCommand is a `go run ./cmd/simrun ...` line of a code block in the
// project's docs.
type docCommand struct {
	where string // file:line
	args  []string
}

// docCommands finds every simrun command that README.md and docs/*.md
// show in a code block.
func docCommands() []docCommand {
	files, err := filepath.Glob("../../docs/*.md")
	Expect(err).NotTo(HaveOccurred())
	files = append([]string{"../../README.md"}, files...)
	var out []docCommand
	for _, f := range files {
		data, err := os.ReadFile(f)
		Expect(err).NotTo(HaveOccurred())
		inBlock := false
		for i, line := range strings.Split(string(data), "\n") {
			if strings.HasPrefix(strings.TrimSpace(line), "```") {
				inBlock = !inBlock
				continue
			}
			line = strings.TrimSpace(line)
			if !inBlock || !strings.HasPrefix(line, "go run ./cmd/simrun ") {
				continue
			}
			if c := strings.Index(line, " #"); c >= 0 {
				line = line[:c]
			}
			args := strings.Fields(strings.TrimPrefix(line, "go run ./cmd/simrun "))
			out = append(out, docCommand{where: filepath.Base(f) + ":" + strconv.Itoa(i+1), args: args})
		}
	}
	return out
}

var _ = Describe("the docs' commands", func() {
	It("run as the docs show them and exit 0", Label("slow"), func() {
		cmds := docCommands()
		Expect(len(cmds)).To(BeNumerically(">=", 7), "README's commands at least")
		for _, c := range cmds {
			args := append([]string{}, c.args...)
			for i, a := range args {
				// Paths are the clone's; an output folder goes to a
				// temporary one.
				if _, err := os.Stat(filepath.Join("../..", a)); err == nil {
					args[i] = filepath.Join("../..", a)
				}
				if i > 0 && args[i-1] == "--out" {
					args[i] = GinkgoT().TempDir()
				}
			}
			code, out, errOut := simrun(args...)
			Expect(code).To(Equal(0), "%s: simrun %s: %s", c.where, strings.Join(c.args, " "), errOut)
			Expect(out).NotTo(BeEmpty(), c.where)
		}
	})

	It("list every bundled scenario in the README, and the README lists only those", func() {
		data, err := os.ReadFile("../../README.md")
		Expect(err).NotTo(HaveOccurred())
		var inReadme []string
		// The table of bundled scenarios: rows whose first cell is a
		// name in backquotes (the layout table's are folders, with a /).
		for _, m := range regexp.MustCompile("(?m)^\\| `([a-z0-9-]+)` \\|").FindAllStringSubmatch(string(data), -1) {
			inReadme = append(inReadme, m[1])
		}
		names := scenarios.Names()
		sort.Strings(names)
		sort.Strings(inReadme)
		Expect(inReadme).To(Equal(names))
		code, out, _ := simrun("list")
		Expect(code).To(Equal(0))
		for _, n := range names {
			Expect(out).To(ContainSubstring(n))
		}
	})
})
