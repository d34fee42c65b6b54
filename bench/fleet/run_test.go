package fleet

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestSweepPoints(t *testing.T) {
	sleep := RunConfig{Load: 0.8, TaskDuration: 100 * time.Millisecond}
	noop := RunConfig{Load: 0.8}
	for _, c := range []struct {
		name         string
		loads, rates string
		c            RunConfig
		want         []SweepPoint
		err          string
	}{
		{name: "loads", loads: "0.25,0.5", c: sleep, want: []SweepPoint{{Load: 0.25}, {Load: 0.5}}},
		{name: "rates win", loads: "0.25", rates: "100, 300", c: sleep, want: []SweepPoint{{Load: 0.8, Rate: 100}, {Load: 0.8, Rate: 300}}},
		{name: "no-op tasks by rate", loads: "x", rates: "100", c: noop, want: []SweepPoint{{Load: 0.8, Rate: 100}}},
		{name: "no-op tasks have no load", loads: "0.25", c: noop, err: "sweep --rates instead"},
		{name: "bad rate", rates: "0", c: sleep, err: `--rates: "0" is not a positive number`},
		{name: "bad load", loads: "0.5,0", c: sleep, err: `--loads: "0" is not a positive number`},
		{name: "no loads", loads: ",", c: sleep, err: "--loads: no values"},
	} {
		got, err := SweepPoints(c.loads, c.rates, c.c)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%s: error %v, want %q", c.name, err, c.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, %v; want %v", c.name, got, err, c.want)
		}
	}
}
