package listflag

import (
	"slices"
	"strings"
	"testing"
)

func TestPositive(t *testing.T) {
	for _, c := range []struct {
		list string
		want []float64
		err  string
	}{
		{list: "0.5,1,2,10,1000", want: []float64{0.5, 1, 2, 10, 1000}},
		{list: " 50 , 200,", want: []float64{50, 200}},
		{list: "0", err: `--x: "0" is not a positive number`},
		{list: "1,-1", err: `"-1" is not a positive number`},
		{list: "x", err: `"x" is not a positive number`},
		{list: "NaN", err: `"NaN" is not a positive number`},
		{list: ",", err: "--x: no values"},
		{list: "", err: "no values"},
	} {
		got, err := Positive("--x", c.list)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: error %v, want %q", c.list, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%q: %v, %v; want %v", c.list, got, err, c.want)
		}
	}
}
