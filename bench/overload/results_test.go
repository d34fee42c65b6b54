package overload

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/report"
)

// TestPointsPrint: the JSON leaves the per-second samples out (they stay
// in each point's point.json); the table is WriteTable's.
func TestPointsPrint(t *testing.T) {
	pts := Points{{Multiple: 2, GoodputPct: 97, Samples: []Sample{{}, {}}, Gossip: Gossip{DeclaredDead: []string{}}}}
	for _, c := range []struct {
		f    report.Format
		want string
	}{{report.JSONLine, `"multiple":2`}, {report.TableOnly, "97.0%"}} {
		var b bytes.Buffer
		if err := report.Print(&b, pts, c.f); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), c.want) || strings.Contains(b.String(), `"samples"`) {
			t.Errorf("format %d: %s", c.f, b.String())
		}
		if c.f == report.JSONLine {
			var back []Point
			if err := json.Unmarshal(b.Bytes(), &back); err != nil || len(back) != 1 || back[0].Samples != nil {
				t.Errorf("JSON %s: %v", b.String(), err)
			}
		}
	}
	if len(pts[0].Samples) != 2 {
		t.Error("printing stripped the caller's samples")
	}
}

func TestOptionsFlags(t *testing.T) {
	for _, c := range []struct {
		args []string
		want []float64
		err  string
	}{
		{args: nil, want: []float64{0.5, 1, 2, 10, 1000}},
		{args: []string{"--multiples", "2, 1000"}, want: []float64{2, 1000}},
		{args: []string{"--multiples", "0"}, err: `--multiples: "0" is not a positive number`},
		{args: []string{"--multiples", ","}, err: "--multiples: no values"},
	} {
		var o Options
		fs := pflag.NewFlagSet("overload", pflag.ContinueOnError)
		o.AddFlags(fs)
		if err := fs.Parse(c.args); err != nil {
			t.Fatal(err)
		}
		err := o.Validate()
		if c.err != "" {
			if err == nil || err.Error() != c.err {
				t.Errorf("%v: error %v, want %q", c.args, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(o.Multiples, c.want) || o.Dir != "bin/bench-overload" || o.Capacity() != 32 {
			t.Errorf("%v: multiples %v, dir %q, capacity %v, %v", c.args, o.Multiples, o.Dir, o.Capacity(), err)
		}
	}
}
