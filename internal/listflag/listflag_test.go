package listflag

import (
	"math"
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
		{list: "inf", err: `"inf" is not a positive number`},
		{list: "1e309", err: `"1e309" is not a positive number`},
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

// FuzzPositive: any flag value is either refused with an error naming the
// flag, or parsed into finite positive numbers, one per non-empty item.
func FuzzPositive(f *testing.F) {
	for _, s := range []string{"0.8,0.9", " 1 , ,2", "", "0", "-1", "inf", "NaN", "1e308,1e309", "0x1p-3"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, list string) {
		got, err := Positive("--loads", list)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "--loads: ") {
				t.Fatalf("error %q does not name the flag", err)
			}
			return
		}
		items := 0
		for _, it := range strings.Split(list, ",") {
			if strings.TrimSpace(it) != "" {
				items++
			}
		}
		if len(got) != items || len(got) == 0 {
			t.Fatalf("%q: %d values from %d items", list, len(got), items)
		}
		for _, v := range got {
			if !(v > 0) || math.IsInf(v, 0) {
				t.Fatalf("%q: value %v is not finite and positive", list, v)
			}
		}
	})
}
