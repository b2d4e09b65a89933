package report

import "fmt"

// rtcNetwork is the savanna network with run-to-completion applications
// (bench/netw.SavannaRTC).
const rtcNetwork = "savanna-rtc"

// Issue 23's bounds for the live stack on the in-memory link.
const (
	// rtcP50Target is the ping-pong p50 to reach, in µs.
	rtcP50Target = 3.0
	// rtcBulkMTU is where bulk must reach the kernel's loopback per
	// CPU-second.
	rtcBulkMTU = 9000
)

// hasNetwork reports whether any cell ran on network.
func (r *Report) hasNetwork(network string) bool {
	for _, c := range r.Cells {
		if c.Network == network {
			return true
		}
	}
	return false
}

// checkRTCGoals adds issue 23's goals for savanna-rtc, at IPv4, when it
// ran: ping-pong p50 at most 3 µs (the figure itself stands in the ratio
// column), and bulk MB per CPU-second at MTU 9000 at least the kernel's
// loopback's.
func (r *Report) checkRTCGoals() {
	why := "; PROFILE.md's section \"Run to completion (savanna-rtc)\" says what bounds it"
	if pc := r.Find("pingpong", rtcNetwork, 0); pc != nil {
		g := Goal{Text: "ping-pong p50 in µs, savanna-rtc (the figure, not a ratio)", Target: fmt.Sprintf("≤ %g", rtcP50Target)}
		if s, ok := pc.Stat("p50"); ok && len(pc.Failures) == 0 {
			g.Known, g.Ratio = true, s.Median
			g.Met = s.Median <= rtcP50Target
			if !g.Met {
				g.Note = fmt.Sprintf("p50 %s µs (%s–%s over %d repetitions)%s", fmtNum(s.Median), fmtNum(s.Min), fmtNum(s.Max), len(pc.Runs), why)
			}
		}
		r.Goals = append(r.Goals, g)
	}
	if !r.ranBulk(rtcNetwork) {
		return
	}
	g := Goal{Text: fmt.Sprintf("bulk MB per CPU-second, savanna-rtc/kernel at MTU %d", rtcBulkMTU), Target: "≥ 1"}
	rc, kc := r.Find("bulk", rtcNetwork, rtcBulkMTU), r.Find("bulk", "kernel", 0)
	if rc != nil && kc != nil && len(rc.Failures) == 0 && len(kc.Failures) == 0 {
		rs, ok1 := rc.Stat("mb_per_cpu_s")
		ks, ok2 := kc.Stat("mb_per_cpu_s")
		if ok1 && ok2 && ks.Median > 0 {
			g.Known, g.Ratio = true, rs.Median/ks.Median
			g.Met = g.Ratio >= 1
			if !g.Met {
				g.Note = fmt.Sprintf("savanna-rtc %s (%s–%s), kernel %s (%s–%s) MB/CPU-s", fmtNum(rs.Median), fmtNum(rs.Min), fmtNum(rs.Max),
					fmtNum(ks.Median), fmtNum(ks.Min), fmtNum(ks.Max))
				if rs.Max >= ks.Min && len(rc.Runs) > 1 && len(kc.Runs) > 1 {
					g.Note += "; the repetitions overlap, so this run alone does not tell the gap from run-to-run noise"
				}
				g.Note += why
			}
		}
	}
	r.Goals = append(r.Goals, g)
}

// ranBulk reports whether network ran bulk at IPv4.
func (r *Report) ranBulk(network string) bool { return r.Find("bulk", network, 0) != nil }
