package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/savanna-sim/savanna/hw"
	"github.com/savanna-sim/savanna/zlibshim"
)

// options are qzip's command line, in the spirit of QATzip's qzip (and
// gzip's own flags where they agree).
type options struct {
	decompress bool
	keep       bool
	stdout     bool
	force      bool
	verbose    bool
	level      int
	format     zlibshim.Format
	chunk      int
	policy     zlibshim.Policy
	completion zlibshim.CompletionMode
	backend    string // sim or dpdk
	eal        string // EAL arguments for dpdk
	device     string // compress device for dpdk
	files      []string
}

// env is what qzip runs against: the streams and the accelerator. A nil
// service means no accelerator (everything in software).
type env struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	svc            hw.CompressService
	pid            hw.ProcessID
	meter          hw.Meter
	// deviceSummary, when set, adds the device's own view to -v.
	deviceSummary func() string
	// openDPDK starts DPDK's EAL with ealArgs and returns the compress
	// device named device as the accelerator (-backend dpdk).
	openDPDK func(ealArgs, device string) (hw.CompressService, error)
}

func parseArgs(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("qzip", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var o options
	var format, policy, mode string
	var sw bool
	fs.BoolVar(&o.decompress, "d", false, "decompress")
	fs.BoolVar(&o.keep, "k", false, "keep (don't delete) input files")
	fs.BoolVar(&o.stdout, "c", false, "write on standard output, keep input files")
	fs.BoolVar(&o.force, "f", false, "overwrite existing output files")
	fs.BoolVar(&o.verbose, "v", false, "print a summary of what ran on the device and what fell back, to stderr")
	fs.IntVar(&o.level, "L", 1, "compression level 1..9")
	fs.StringVar(&format, "O", "gzip", "output format: gzip, gzipext or deflate")
	fs.IntVar(&o.chunk, "C", zlibshim.DefaultRequestSize, "hardware request (chunk) size in bytes")
	fs.StringVar(&policy, "policy", "failover", "software-only, failover or hardware-only")
	fs.BoolVar(&sw, "sw", false, "software only (same as -policy software-only)")
	fs.StringVar(&mode, "P", "polling", "completion mode: polling or thread")
	fs.StringVar(&o.backend, "backend", "sim", "accelerator: sim (a simulated QAT c62x) or dpdk (a DPDK compress device; needs a build with -tags dpdk)")
	fs.StringVar(&o.eal, "eal", "--no-huge -m 256 --no-pci --no-shconf -l 0 --vdev=compress_isal", "with -backend dpdk: the EAL arguments")
	fs.StringVar(&o.device, "device", "compress_isal", "with -backend dpdk: the compress device (compress_isal, compress_zlib, or a QAT PMD's name)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: qzip [-d] [-k] [-c] [-f] [-v] [-L level] [-O gzip|gzipext|deflate] [-C chunk] [-P polling|thread] [-policy p | -sw] [file ...]\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	var err error
	if o.format, err = zlibshim.ParseFormat(format); err != nil || o.format == zlibshim.FormatZlib || o.format == zlibshim.FormatAuto {
		return o, fmt.Errorf("-O %s: want gzip, gzipext or deflate", format)
	}
	if o.level < 1 || o.level > 9 {
		return o, fmt.Errorf("-L %d: want 1..9", o.level)
	}
	if o.policy, err = zlibshim.ParsePolicy(policy); err != nil {
		return o, fmt.Errorf("-policy: %w", err)
	}
	if sw {
		o.policy = zlibshim.PolicySoftwareOnly
	}
	if err := o.completion.UnmarshalText([]byte(mode)); err != nil {
		return o, fmt.Errorf("-P: %w", err)
	}
	if o.backend != "sim" && o.backend != "dpdk" {
		return o, fmt.Errorf("-backend %s: want sim or dpdk", o.backend)
	}
	o.files = fs.Args()
	return o, nil
}

// run is qzip: it returns the exit status (0, 1 on error, as gzip).
func run(args []string, e env) int {
	o, err := parseArgs(args, e.stderr)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(e.stderr, "qzip: %v\n", err)
		return 1
	}
	cfg := zlibshim.Config{Policy: o.policy, Completion: o.completion, RequestSize: o.chunk}
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(e.stderr, "qzip: %v\n", err)
		return 1
	}
	svc := e.svc
	if o.backend == "dpdk" {
		if e.openDPDK == nil {
			fmt.Fprintf(e.stderr, "qzip: -backend dpdk: not wired in this program\n")
			return 1
		}
		if svc, err = e.openDPDK(o.eal, o.device); err != nil {
			fmt.Fprintf(e.stderr, "qzip: -backend dpdk: %v\n", err)
			return 1
		}
		e.deviceSummary = nil // the simulated device's view does not apply
	}
	if o.policy == zlibshim.PolicySoftwareOnly {
		svc = nil
	}
	p, err := zlibshim.NewProcess(svc, e.pid, e.meter, cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "qzip: %v\n", err)
		return 1
	}
	defer p.Exit()
	status := 0
	if len(o.files) == 0 {
		o.files = []string{"-"}
	}
	for _, name := range o.files {
		if err := processFile(p, o, e, name); err != nil {
			fmt.Fprintf(e.stderr, "qzip: %v\n", err)
			status = 1
		}
	}
	if o.verbose {
		summary(e.stderr, p)
		if e.deviceSummary != nil {
			fmt.Fprint(e.stderr, e.deviceSummary())
		}
	}
	return status
}

// suffix is the file suffix of a format.
func suffix(f zlibshim.Format) string {
	if f == zlibshim.FormatRaw {
		return ".deflate"
	}
	return ".gz"
}

// processFile compresses or decompresses one file ("-": stdin).
func processFile(p *zlibshim.Process, o options, e env, name string) error {
	if name == "-" {
		return transform(p, o, e.stdin, e.stdout, "stdin")
	}
	outName := ""
	if !o.stdout {
		if o.decompress {
			s := suffix(o.format)
			if !strings.HasSuffix(name, s) || len(name) == len(s) {
				return fmt.Errorf("%s: unknown suffix -- ignored (want %s)", name, s)
			}
			outName = strings.TrimSuffix(name, s)
		} else {
			if strings.HasSuffix(name, suffix(o.format)) {
				return fmt.Errorf("%s already has %s suffix -- unchanged", name, suffix(o.format))
			}
			outName = name + suffix(o.format)
		}
	}
	in, err := os.Open(name)
	if err != nil {
		return err
	}
	defer in.Close()
	if info, err := in.Stat(); err == nil && !info.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file -- ignored", name)
	}
	if o.stdout {
		return transform(p, o, in, e.stdout, name)
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_EXCL
	if o.force {
		flags = os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	}
	out, err := os.OpenFile(outName, flags, 0o644)
	if err != nil {
		return err
	}
	if err := transform(p, o, in, out, name); err != nil {
		out.Close()
		os.Remove(outName)
		return err
	}
	if err := out.Close(); err != nil {
		os.Remove(outName)
		return err
	}
	if !o.keep {
		return os.Remove(name)
	}
	return nil
}

// transform runs one stream through the shim.
func transform(p *zlibshim.Process, o options, in io.Reader, out io.Writer, name string) error {
	if o.decompress {
		f := zlibshim.FormatGzip
		if o.format == zlibshim.FormatRaw {
			f = zlibshim.FormatRaw
		}
		zr, err := p.NewReader(in, f)
		if errors.Is(err, io.EOF) {
			return fmt.Errorf("%s: unexpected end of file", name)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		defer zr.Close()
		if _, err := io.Copy(out, zr); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		return nil
	}
	zw, err := p.NewWriterLevel(out, o.format, o.level)
	if err != nil {
		return err
	}
	if _, err := io.Copy(zw, in); err != nil {
		_ = zw.Close()
		return fmt.Errorf("%s: %w", name, err)
	}
	if err := zw.Close(); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

// summary prints what ran on the device and what fell back.
func summary(w io.Writer, p *zlibshim.Process) {
	st, s := p.Stats(), p.Status()
	fmt.Fprintf(w, "qzip: policy %s, hardware available %v\n", s.Policy, s.HardwareAvailable)
	fmt.Fprintf(w, "qzip: device   %d requests, %d bytes in, %d bytes out\n", st.HWRequests, st.HWBytesIn, st.HWBytesOut)
	fmt.Fprintf(w, "qzip: software %d requests, %d bytes in, %d bytes out (small %d, unsupported %d, backoff %d)\n",
		st.SWRequests, st.SWBytesIn, st.SWBytesOut, st.SmallRequests, st.UnsupportedRequests, st.BackoffRequests)
	fb := st.Fallbacks
	fmt.Fprintf(w, "qzip: fallbacks %d (no_instance %d, no_pinned_memory %d, device_down %d, engine_error %d, timeout %d, enqueue_refused %d, overflow %d, attach_error %d); returns to hardware %d\n",
		fb.Total(), fb.NoInstance, fb.NoPinnedMemory, fb.DeviceDown, fb.EngineError, fb.Timeout, fb.EnqueueRefused, fb.Overflow, fb.AttachError, st.ReturnsToHW)
	perReq := 0.0
	if st.HWRequests > 0 {
		perReq = float64(st.Syscalls) / float64(st.HWRequests)
	}
	fmt.Fprintf(w, "qzip: polls %d (%d empty), waits %d, shim syscalls %d (%.2f per request)\n", st.Polls, st.EmptyPolls, st.Waits, st.Syscalls, perReq)
	fmt.Fprintf(w, "qzip: inflate %d bytes in, %d bytes out, %d errors\n", st.InflateBytesIn, st.InflateBytesOut, st.InflateErrors)
}
