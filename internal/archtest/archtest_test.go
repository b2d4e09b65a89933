package archtest_test

import (
	"fmt"
	"sort"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"

	"github.com/savanna-sim/savanna/internal/archtest"
)

// The layers of docs/architecture.md ("The invariants"), by package path
// relative to the module. Every package of the module must be in exactly
// one, so that a new top-level directory is a decision, not a gap.
var (
	// The product: the real code, which must not know whether it runs
	// on a model (invariant 1).
	product = []string{"stack/...", "zlibshim/...", "apps/..."}
	// The hardware contracts (invariant 5): the interfaces both the
	// product and the models depend on.
	contracts = []string{"hw"}
	// Implementations of the contracts other than the models (real DPDK,
	// in-memory rings, TAP and the shared-memory link for real time) and the contracts'
	// conformance kit (hw/hwtest, which the models' and the real
	// devices' specs share). Like the models, they are chosen by rig/cmd.
	hwImpls = []string{"hw/dpdk/...", "hw/ringdev/...", "hw/shmlink/...", "hw/tap/...", "hw/hwtest/..."}
	// The models of the hardware, in virtual time.
	models = []string{"sim/..."}
	// What chooses an implementation and wires a run: the rig, the
	// scenarios it embeds, the commands, the zlib drop-in's Go library
	// (dropin/zlibgo, a command built as a C shared library), and the
	// preload library's specs (preload/preloadtest, which drive C
	// programs against a stack process).
	rigCmd = []string{"rig/...", "scenarios/...", "cmd/...", "dropin/...", "preload/..."}
	// Shared helpers; which rules apply depends on who uses them.
	internal = []string{"internal/..."}

	layers = map[string][]string{"product": product, "contracts": contracts, "hw implementations": hwImpls,
		"models": models, "rig and commands": rigCmd, "internal": internal}
)

func join(sets ...[]string) []string {
	var out []string
	for _, s := range sets {
		out = append(out, s...)
	}
	return out
}

// sharedDebt are packages that both the product and the models use today
// besides the contracts. A model is the oracle of the product it runs:
// code they share is checked against itself (a wrong Toeplitz hash or
// inflater would be wrong on both sides and every spec would agree), so
// the list may only shrink. sim/nic's checksum was the first to go: it
// has its own RFC 1071 sum (sim/nic/checksum.go) instead of
// stack/checksum.
var sharedDebt = map[string]string{
	"internal/rss":     "sim/nic's RSS (Toeplitz) and stack/rt's choice of a port for an lcore",
	"internal/adler":   "sim/qat's Adler-32 and zlibshim's",
	"internal/inflate": "sim/qat's decompressor and zlibshim's software path",
}

var g *archtest.Graph

var _ = BeforeSuite(func() {
	var err error
	g, err = archtest.Load(".")
	Expect(err).NotTo(HaveOccurred())
})

var _ = Describe("the dependency rule (docs/architecture.md, invariant 1)", func() {
	It("reads the module's real import graph", func() {
		// Arrows that must exist, so that an empty or misread graph
		// cannot pass every rule below.
		for from, to := range map[string]string{
			"stack/tcp": "hw", "sim/nic": "hw", "rig": "sim", "apps/redis": "stack/tcp", "stack/lstack": "stack/tcp",
		} {
			Expect(g.Imports).To(HaveKey(from))
			Expect(g.Imports[from]).To(ContainElement(to), "%s should import %s", from, to)
		}
	})

	It("places every package of the module in exactly one layer", func() {
		var bad []string
		for _, p := range g.Packages() {
			var in []string
			for name, l := range layers {
				if archtest.Match(p, l) {
					in = append(in, name)
				}
			}
			if len(in) != 1 {
				sort.Strings(in)
				bad = append(bad, fmt.Sprintf("%s in %d layers %v", p, len(in), in))
			}
		}
		Expect(bad).To(BeEmpty(), "add the package to one layer of internal/archtest's table")
	})

	// The rule table: no package of FROM imports, directly or through
	// other packages, a package of TO. The arrows are checked both ways:
	// product -/-> models and models -/-> product; contracts -/-> either.
	DescribeTable("no forbidden arrow",
		func(from, except, to []string) {
			pkgs := g.Select(from, except)
			Expect(pkgs).NotTo(BeEmpty(), "the rule applies to no package: %v", from)
			vs := g.Forbidden(pkgs, to)
			Expect(archtest.Report(vs)).To(BeEmpty(), "forbidden imports (%s must not import %s), shortest chains:",
				strings.Join(from, " "), strings.Join(to, " "))
		},
		Entry("product -/-> models, hw implementations, rig, scenarios, cmd: the real code knows only the contracts; only rig/ and cmd/ choose an implementation",
			product, nil, join(models, hwImpls, rigCmd)),
		Entry("stack, zlibshim -/-> apps: apps -> stack -> hw, in that order",
			[]string{"stack/...", "zlibshim/..."}, nil, []string{"apps/..."}),
		Entry("models -/-> product, hw implementations, rig, scenarios, cmd: a model implements the contracts and never knows the code it runs",
			models, nil, join(product, hwImpls, rigCmd)),
		Entry("contracts -/-> anything of the module: hw is the leaf both sides meet at",
			contracts, nil, join(product, models, hwImpls, rigCmd, internal)),
		Entry("hw implementations -/-> product, models, rig, scenarios, cmd: they stand beside the models, below the product",
			hwImpls, nil, join(product, models, rigCmd)),
	)

	It("keeps the product's internal helpers free of models, hw implementations, rig and cmd", func() {
		used := g.Closure(g.Select(product, nil))
		var helpers []string
		for _, p := range g.Select(internal, nil) {
			if used[p] {
				helpers = append(helpers, p)
			}
		}
		Expect(helpers).To(ContainElement("internal/spsc")) // stack/lstack's queues
		vs := g.Forbidden(helpers, join(models, hwImpls, rigCmd))
		Expect(archtest.Report(vs)).To(BeEmpty(), "internal packages the product uses must not import models, hw implementations, rig or cmd; chains:")
	})

	It("keeps the models' internal helpers free of the product, rig and cmd", func() {
		used := g.Closure(g.Select(models, nil))
		var helpers []string
		for _, p := range g.Select(internal, nil) {
			if used[p] {
				helpers = append(helpers, p)
			}
		}
		Expect(helpers).NotTo(BeEmpty())
		vs := g.Forbidden(helpers, join(product, rigCmd))
		Expect(archtest.Report(vs)).To(BeEmpty(), "internal packages the models use must not import the product, rig or cmd; chains:")
	})

	It("lets a model share no code with the product but the contracts and the known debts", func() {
		prod := g.Closure(g.Select(product, nil))
		mod := g.Closure(g.Select(models, nil))
		var shared []string
		for p := range prod {
			// Packages of either side are the arrow rules' business;
			// this is about helpers both use.
			if mod[p] && !archtest.Match(p, join(contracts, product, models)) {
				shared = append(shared, p)
			}
		}
		sort.Strings(shared)
		var unknown, paid []string
		for _, p := range shared {
			if _, ok := sharedDebt[p]; !ok {
				unknown = append(unknown, p)
			}
		}
		for p := range sharedDebt {
			if !prod[p] || !mod[p] {
				paid = append(paid, p)
			}
		}
		sort.Strings(paid)
		Expect(unknown).To(BeEmpty(), "used by both the product and the models (a model must not check the product with the product's own code): %v", unknown)
		Expect(paid).To(BeEmpty(), "no longer shared: remove from sharedDebt in internal/archtest: %v", paid)
	})
})

var _ = Describe("the checker", func() {
	// A graph with one forbidden arrow two imports away: the checker must
	// find it and name the chain.
	bad := &archtest.Graph{Module: "m", Imports: map[string][]string{
		"stack/tcp":      {"hw", "stack/checksum"},
		"stack/checksum": {"internal/x"},
		"internal/x":     {"sim/nic"},
		"sim/nic":        {"hw", "sim"},
		"sim":            {"hw"},
		"hw":             {},
	}}

	It("reports a transitive forbidden import with its shortest chain", func() {
		vs := bad.Forbidden([]string{"stack/tcp"}, models)
		Expect(vs).To(HaveLen(2))
		Expect(vs[0].String()).To(Equal("stack/tcp -> stack/checksum -> internal/x -> sim/nic -> sim"))
		Expect(vs[1].String()).To(Equal("stack/tcp -> stack/checksum -> internal/x -> sim/nic"))
	})

	It("finds nothing where there is nothing", func() {
		Expect(bad.Forbidden([]string{"sim/nic"}, product)).To(BeEmpty())
		Expect(bad.Forbidden([]string{"hw"}, join(product, models))).To(BeEmpty())
	})

	DescribeTable("matches patterns like go's ./...",
		func(pkg string, patterns []string, want bool) {
			Expect(archtest.Match(pkg, patterns)).To(Equal(want))
		},
		Entry(nil, "sim", []string{"sim/..."}, true),
		Entry(nil, "sim/nic", []string{"sim/..."}, true),
		Entry(nil, "simhost", []string{"sim/..."}, false),
		Entry(nil, "hw/dpdk", []string{"hw"}, false),
		Entry(nil, "hw", []string{"hw"}, true),
	)
})
