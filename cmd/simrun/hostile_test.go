package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// maxValidateAlloc is the most simrun validate may allocate on a hostile
// file: it must refuse it from the nodes, before building anything.
const maxValidateAlloc = 100 << 20

// validateMeasured runs simrun validate in-process and returns its exit
// code, its stderr and the bytes it allocated (runtime.MemStats
// TotalAlloc, which counts what the collector freed too).
func validateMeasured(args ...string) (int, string, uint64) {
	var out, errOut bytes.Buffer
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	code := run(append([]string{"validate"}, args...), &out, &errOut)
	runtime.ReadMemStats(&after)
	Expect(out.String()).To(BeEmpty())
	return code, errOut.String(), after.TotalAlloc - before.TotalAlloc
}

// secrets are texts of files a hostile scenario names, which no error
// may print.
var secrets = []string{"root:", "/bin/bash", "nologin", "hunter2", "s3cr3t", "do-not-print"}

var _ = Describe("hostile scenario files (issue 17)", func() {
	DescribeTable("are refused by validate with exit 2 at file:line and key, quoting no file, with bounded memory",
		func(file, want string) {
			path := filepath.Join("testdata", "hostile", file)
			code, errOut, alloc := validateMeasured(path)
			Expect(code).To(Equal(2), errOut)
			Expect(errOut).To(HavePrefix("simrun: " + path + ":"))
			Expect(errOut).To(ContainSubstring(want))
			for _, s := range secrets {
				Expect(errOut).NotTo(ContainSubstring(s))
			}
			Expect(alloc).To(BeNumerically("<", maxValidateAlloc), "bytes allocated")
		},
		Entry("finding 2: 10,000 pages of 16 MiB", "pages-10000.yaml",
			`:44:9: key "hosts.web.apps[0].pages": 10000 entries, over the limit of 64`),
		Entry("finding 4: an alias bomb", "alias-bomb.yaml",
			`:7:1364: alias *n: the document reaches more than 10000 nodes through aliases`),
		Entry("finding 5: cost.file: /etc/passwd", "cost-passwd.yaml",
			`:18:12: key "hosts.server.cost.file": /etc/passwd is /etc/passwd, outside the scenario's folder`),
		Entry("finding 5: /etc/passwd through ..", "cost-dotdot.yaml",
			`:18:12: key "hosts.server.cost.file": ../../../../../../../../../../etc/passwd is /etc/passwd, outside the scenario's folder`),
		Entry("finding 5: a file in the folder that is not a cost model", "cost-not-a-model.yaml",
			`:18:12: key "hosts.server.cost.file": `),
		Entry("finding 6: an event at a negative time", "negative-event.yaml",
			`:42:6: key "events[0].at": -1ms is before the start of the run`),
		Entry("finding 9: duration: 1000h", "duration-1000h.yaml",
			`:12:1: key "duration": 1000h0m0s, over the limit of 1h0m0s`),
		Entry("finding 9: warmup: 1000h", "warmup-1000h.yaml",
			`:13:1: key "warmup": 1000h0m0s, over the limit of 1h0m0s`),
		Entry("NIC pools of 35 GB", "mbuf-pools.yaml",
			`:20:9: key "hosts.server.nics[0]": its rx mbuf pools take 34816000000 bytes`),
		Entry("12,000 events", "events-12000.yaml",
			`:41:1: key "events": 12000 entries, over the limit of 10000`),
	)

	It("names a cost file that is not a cost model by its line, never its text", func() {
		_, errOut, _ := validateMeasured(filepath.Join("testdata", "hostile", "cost-not-a-model.yaml"))
		Expect(errOut).To(HaveSuffix("secret.txt:1:1: unknown key (the file's text is not shown)\n"))
	})

	It("refuses a cost file that is a symlink out of the scenario's folder", func() {
		dir := GinkgoT().TempDir()
		data, err := os.ReadFile(filepath.Join("testdata", "hostile", "cost-not-a-model.yaml"))
		Expect(err).NotTo(HaveOccurred())
		path := filepath.Join(dir, "s.yaml")
		Expect(os.WriteFile(path, data, 0o644)).To(Succeed())
		Expect(os.Symlink("/etc/passwd", filepath.Join(dir, "secret.txt"))).To(Succeed())
		code, errOut, _ := validateMeasured(path)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`key "hosts.server.cost.file": secret.txt is /etc/passwd, outside the scenario's folder`))
		for _, s := range secrets {
			Expect(errOut).NotTo(ContainSubstring(s))
		}
	})

	It("reads a cost file outside the folder with --allow-path, still quoting nothing of it", func() {
		code, errOut, _ := validateMeasured(filepath.Join("testdata", "hostile", "cost-passwd.yaml"), "--allow-path", "/etc")
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring(`key "hosts.server.cost.file": /etc/passwd:1:1: a value of the wrong type or shape (the file's text is not shown)`))
		for _, s := range secrets {
			Expect(errOut).NotTo(ContainSubstring(s))
		}
	})

	It("loads a real cost model from the scenario's folder, and from an allowed one", func() {
		dir := GinkgoT().TempDir()
		model, err := os.ReadFile("../../sim/cost/data/default.yaml")
		Expect(err).NotTo(HaveOccurred())
		Expect(os.WriteFile(filepath.Join(dir, "model.yaml"), model, 0o644)).To(Succeed())
		scen := edited("quickstart", "    machine: kunpeng920-4826-2p\n    nics:\n      - {name: eth0, model: hi1822-25g, numa_node: 0, ip: 10.0.0.1/24}",
			"    machine: kunpeng920-4826-2p\n    cost: {file: "+filepath.Join(dir, "model.yaml")+"}\n    nics:\n      - {name: eth0, model: hi1822-25g, numa_node: 0, ip: 10.0.0.1/24}")
		code, errOut, _ := validateMeasured(scen)
		Expect(code).To(Equal(2))
		Expect(errOut).To(ContainSubstring("outside the scenario's folder"))
		code, out, errOut := simrun("validate", scen, "--allow-path", dir)
		Expect(code).To(Equal(0), errOut)
		Expect(out).To(ContainSubstring("valid"))
	})
})
