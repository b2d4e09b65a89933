package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	. "github.com/onsi/ginkgo/v2"
	. "github.com/onsi/gomega"
)

// qz runs qzip on the simulated device with the given stdin.
func qz(stdin []byte, args ...string) (int, []byte, string) {
	e := defaultEnv()
	var out, errb bytes.Buffer
	e.stdin, e.stdout, e.stderr = bytes.NewReader(stdin), &out, &errb
	rc := run(args, e)
	return rc, out.Bytes(), errb.String()
}

func gunzipBytes(b []byte) []byte {
	if _, err := exec.LookPath("gzip"); err != nil {
		Skip("gzip is not on this machine")
	}
	cmd := exec.Command("gzip", "-dc")
	cmd.Stdin = bytes.NewReader(b)
	out, err := cmd.Output()
	Expect(err).NotTo(HaveOccurred())
	return out
}

var _ = Describe("qzip", func() {
	var dir, file string
	content := bytes.Repeat([]byte("qzip compresses through the zlib shim on a simulated QAT card.\n"), 5000)

	BeforeEach(func() {
		dir = GinkgoT().TempDir()
		file = filepath.Join(dir, "body.html")
		Expect(os.WriteFile(file, content, 0o644)).To(Succeed())
	})

	It("compresses a file to .gz that gzip -d reads, removing the input", func() {
		rc, _, stderr := qz(nil, "-v", file)
		Expect(rc).To(Equal(0), stderr)
		Expect(file).NotTo(BeAnExistingFile())
		comp, err := os.ReadFile(file + ".gz")
		Expect(err).NotTo(HaveOccurred())
		Expect(gunzipBytes(comp)).To(Equal(content))
		Expect(stderr).To(ContainSubstring("qzip: device   5 requests, 315000 bytes in"))
		Expect(stderr).To(ContainSubstring("fallbacks 0"))
	})

	It("keeps the input with -k and decompresses with -d", func() {
		rc, _, stderr := qz(nil, "-k", "-L", "9", file)
		Expect(rc).To(Equal(0), stderr)
		Expect(file).To(BeAnExistingFile())
		Expect(os.Remove(file)).To(Succeed())
		rc, _, stderr = qz(nil, "-d", file+".gz")
		Expect(rc).To(Equal(0), stderr)
		Expect(os.ReadFile(file)).To(Equal(content))
		Expect(file + ".gz").NotTo(BeAnExistingFile())
	})

	DescribeTable("pipes in every output format",
		func(format string) {
			rc, comp, stderr := qz(content, "-O", format)
			Expect(rc).To(Equal(0), stderr)
			if format != "deflate" {
				Expect(gunzipBytes(comp)).To(Equal(content))
			}
			rc, plain, stderr := qz(comp, "-d", "-O", format)
			Expect(rc).To(Equal(0), stderr)
			Expect(plain).To(Equal(content))
		},
		Entry("gzip", "gzip"), Entry("gzipext", "gzipext"), Entry("deflate", "deflate"),
	)

	It("decompresses what gzip wrote, to stdout with -c", func() {
		if _, err := exec.LookPath("gzip"); err != nil {
			Skip("gzip is not on this machine")
		}
		Expect(exec.Command("gzip", "-k", file).Run()).To(Succeed())
		rc, out, stderr := qz(nil, "-d", "-c", file+".gz")
		Expect(rc).To(Equal(0), stderr)
		Expect(out).To(Equal(content))
	})

	It("runs in software with -sw and says so", func() {
		rc, comp, stderr := qz(content, "-sw", "-v")
		Expect(rc).To(Equal(0))
		Expect(gunzipBytes(comp)).To(Equal(content))
		Expect(stderr).To(ContainSubstring("policy software-only"))
		Expect(stderr).To(ContainSubstring("device   0 requests"))
	})

	It("compresses empty input to a valid gzip file", func() {
		rc, comp, _ := qz(nil)
		Expect(rc).To(Equal(0))
		Expect(gunzipBytes(comp)).To(BeEmpty())
	})

	It("fails with status 1 on corrupt input and bad flags", func() {
		rc, _, stderr := qz([]byte("this is not gzip"), "-d")
		Expect(rc).To(Equal(1))
		Expect(stderr).To(ContainSubstring("data error"))
		rc, _, stderr = qz(nil, "-L", "12")
		Expect(rc).To(Equal(1))
		Expect(stderr).To(ContainSubstring("-L 12"))
		rc, _, stderr = qz(nil, "-d", filepath.Join(dir, "nosuffix"))
		Expect(rc).To(Equal(1))
		Expect(strings.Contains(stderr, "unknown suffix")).To(BeTrue())
	})
})
