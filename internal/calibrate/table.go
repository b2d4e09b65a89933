package calibrate

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// WriteTable prints what a calibration measured: each benchmark's
// median and spread, each measured price, and the operations that kept
// their default price.
func WriteTable(w io.Writer, r *Result, prices []Price) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "Machine: %s\n", r.Machine)
	fmt.Fprintf(tw, "Load before: %s\nLoad after:  %s\n", r.Before, r.After)
	if r.Forced() {
		fmt.Fprintf(tw, "NOISY: busy machine, written with --force: %s\n", strings.Join(r.Busy, "; "))
	}
	fmt.Fprintf(tw, "\nbenchmark\tmedian\tunit\tmin\tmax\tspread (IQR)\trange\t\n")
	for _, m := range r.Measurements {
		if m.Skipped != "" {
			fmt.Fprintf(tw, "%s\tskipped: %s\t\t\t\t\t\t\n", m.Bench.Name, m.Skipped)
			continue
		}
		mark := ""
		if r.Rule.Noisy(m.Summary) {
			mark = "noisy"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%.1f%%\t%.1f%%\t%s\n", m.Bench.Name, num(m.Summary.Median), m.Bench.Unit,
			num(m.Summary.Min), num(m.Summary.Max), 100*m.Summary.Spread(), 100*m.Summary.Range(), mark)
	}
	fmt.Fprintf(tw, "\nprice\tvalue\tunit\tspread\tfrom\t\n")
	var kept []string
	for _, p := range prices {
		if !p.Measured {
			kept = append(kept, p.Op)
			continue
		}
		mark := ""
		if p.Noisy {
			mark = "  noisy"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f%%\t%s%s\t\n", p.Op, num(p.Entry.Value), p.Entry.Unit, 100*p.Spread, strings.Join(p.Benches, ","), mark)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\nKept at the default price (%d, each source says why): %s\n", len(kept), strings.Join(kept, ", "))
	return err
}
