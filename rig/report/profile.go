package report

import (
	"fmt"
	"io"
	"math"
)

// Profile is the simulated CPU profile of one host in one variant: where
// its cores' busy time went, as folded stacks (host;layer...;operation),
// the format flame-graph tools read (Brendan Gregg's flamegraph.pl,
// inferno, speedscope).
type Profile struct {
	Variant, Host string
	// Stacks are sorted by Frames.
	Stacks []Stack
}

// Stack is one folded stack and the nanoseconds spent in it.
type Stack struct {
	Frames string
	NS     float64
}

// TotalNS is the profile's busy time.
func (p Profile) TotalNS() float64 {
	var t float64
	for _, s := range p.Stacks {
		t += s.NS
	}
	return t
}

// WriteFolded writes the variant's profiles as folded stacks, one
// "frames value" line each, values in whole nanoseconds (the tools want
// integer sample counts; report.json keeps the picoseconds).
func (r *Report) WriteFolded(w io.Writer, variant string) error {
	for _, p := range r.Profiles {
		if p.Variant != variant {
			continue
		}
		for _, s := range p.Stacks {
			if ns := math.Round(s.NS); ns > 0 {
				if _, err := fmt.Fprintf(w, "%s %.0f\n", s.Frames, ns); err != nil {
					return err
				}
			}
		}
	}
	return nil
}
