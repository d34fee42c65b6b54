package overload

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

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
