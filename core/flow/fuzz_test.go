package flow

import (
	"bytes"
	"errors"
	"strings"
	"testing"
)

// FuzzReadDIMACS feeds arbitrary text to the DIMACS reader: it must return
// a network or an error naming the problem, never panic or hang; whatever
// it returns must round-trip through WriteDIMACS, and small networks must
// solve to a verified optimum or a classified error.
func FuzzReadDIMACS(f *testing.F) {
	for _, seed := range []string{
		"p min 2 1\nn 1 1\nn 2 -1\na 1 2 0 1 5\n",
		"c comment\np min 3 3\nn 1 2\nn 3 -2\na 1 2 0 2 1\na 2 3 1 1 1\na 1 3 0 5 3\n",
		"p min 2 1\nn 1 5\nn 2 -5\na 1 2 0 2 1\n",                   // infeasible
		"p min 2 2\na 1 2 0 1 -3\na 2 1 0 1 1\n",                    // negative cycle
		"p min 2 1\na 1 2 3 2 0\n",                                  // lower > capacity
		"p min 1 1\na 1 2 0 1 0\n",                                  // bad node
		"p max 2 1\n",                                               // wrong problem type
		"a 1 2 0 1 1\n",                                             // arc before problem
		"p min 2 1\nn 1 1\nn 2 -1\na 1 2 0 9223372036854775807 9\n", // overflow risk
		"p min 99999999 0\n",
		"",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, text string) {
		g, err := readDIMACS(strings.NewReader(text), 64)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "dimacs") {
				t.Fatalf("error %q does not say it is about DIMACS input", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := WriteDIMACS(&buf, g); err != nil {
			t.Fatal(err)
		}
		h, err := ReadDIMACS(&buf)
		if err != nil {
			t.Fatalf("re-reading our own output: %v\n%s", err, buf.String())
		}
		if h.NumNodes() != g.NumNodes() || h.NumArcs() != g.NumArcs() {
			t.Fatalf("round trip changed the size: %v -> %v", g, h)
		}
		if g.NumArcs() > 200 {
			return
		}
		s, err := Solve(g)
		if err != nil {
			if !errors.Is(err, ErrInfeasible) && !errors.Is(err, ErrInvalid) && !errors.Is(err, ErrUnbounded) {
				t.Fatalf("unclassified error: %v", err)
			}
			return
		}
		if err := Verify(g, s); err != nil {
			t.Fatal(err)
		}
	})
}
