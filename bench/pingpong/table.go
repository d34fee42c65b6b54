package pingpong

import (
	"fmt"
	"io"
	"text/tabwriter"
)

// WriteTable prints one row per point.
func WriteTable(w io.Writer, pts []Point) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "mode\toffered calls/s\tcalls/s\tclient µs/call\tserver µs/call\tlatency p50 µs\tp99 µs\t")
	for _, p := range pts {
		offered := "flat out"
		if p.OfferedRate > 0 {
			offered = fmt.Sprintf("%g", p.OfferedRate)
		}
		fmt.Fprintf(tw, "%s\t%s\t%.0f\t%.1f\t%.1f\t%.0f\t%.0f\t\n", p.Mode, offered, p.Rate, p.ClientUs, p.ServerUs, p.LatencyUs.P50, p.LatencyUs.P99)
	}
	return tw.Flush()
}
