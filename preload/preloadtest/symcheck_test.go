package preloadtest

import (
	"os"
	"os/exec"
	"path/filepath"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// realBinaries are the Debian programs whose socket imports the preload
// library must cover (those installed: .ci/run installs them).
func realBinaries() []string {
	var out []string
	for _, b := range []string{"/usr/bin/redis-server", "/usr/bin/redis-benchmark", "/usr/sbin/nginx", "/usr/bin/wrk"} {
		if _, err := os.Stat(b); err == nil {
			out = append(out, b)
		}
	}
	return out
}

var _ = Describe("preload/symcheck", func() {
	It("finds every socket-API symbol redis-server, redis-benchmark, nginx, wrk and apitrace import interposed, and fails when one is not", func() {
		if _, err := exec.LookPath("nm"); err != nil {
			Skip("needs nm (binutils)")
		}
		bins := realBinaries()
		if len(bins) == 0 {
			Skip("none of redis-server, redis-benchmark, nginx is installed (.ci/run installs them)")
		}
		dir := needBuild()
		lib := filepath.Join(dir, "libsavanna_preload.so")
		// apitrace imports recvmmsg, sendmmsg and splice, which none of
		// the Debian programs does.
		bins = append(bins, filepath.Join(dir, "apitrace"))
		out, err := exec.Command("../symcheck", append([]string{"--lib", lib}, bins...)...).CombinedOutput()
		GinkgoWriter.Printf("%s", out)
		Expect(err).NotTo(HaveOccurred(), "%s", out)
		Expect(string(out)).To(ContainSubstring("accept4 interposed"))
		Expect(string(out)).NotTo(ContainSubstring("MISSING"))
		for _, sym := range []string{"recvmmsg", "sendmmsg", "splice"} {
			Expect(string(out)).To(ContainSubstring("  " + sym + " interposed"))
		}

		out, err = exec.Command("../symcheck", append([]string{"--lib", lib, "--without", "accept4", "--without", "writev", "--without", "splice"}, bins...)...).CombinedOutput()
		Expect(err).To(HaveOccurred(), "the check must fail without accept4 and writev:\n%s", out)
		Expect(string(out)).To(ContainSubstring("accept4 MISSING"))
		Expect(string(out)).To(ContainSubstring("writev MISSING"))
		Expect(string(out)).To(ContainSubstring("splice MISSING"))
	})
})
