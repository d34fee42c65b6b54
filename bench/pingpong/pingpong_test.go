package pingpong

import (
	"context"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

// Both stacks answer getTask across loopback, and a short paced point
// counts its calls and reads both sides' CPU time (here one process plays
// both sides, read once by getrusage and once from /proc in 10 ms ticks).
func TestServeAndMeasure(t *testing.T) {
	for _, mode := range []Mode{Bare, RPC} {
		t.Run(string(mode), func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			addrc := make(chan string, 1)
			errc := make(chan error, 1)
			go func() { errc <- Serve(ctx, mode, "127.0.0.1:0", func(a string) { addrc <- a }) }()
			var addr string
			select {
			case addr = <-addrc:
			case err := <-errc:
				t.Fatalf("serve: %v", err)
			case <-time.After(20 * time.Second):
				t.Fatal("server did not report its address in 20 s")
			}
			c, err := dial(mode, addr)
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Duration: 200 * time.Millisecond}
			for _, rate := range []float64{0, 200} {
				p, err := measure(ctx, cfg, c, os.Getpid(), rate)
				if err != nil {
					t.Fatalf("rate %g: %v", rate, err)
				}
				if p.Calls == 0 || p.Rate <= 0 || p.LatencyUs.N != p.Calls || p.ClientUs < 0 || p.ServerUs < 0 {
					t.Errorf("rate %g: implausible point %+v", rate, p)
				}
				if rate > 0 && p.Calls > int(rate*cfg.Duration.Seconds())+1 {
					t.Errorf("rate %g over %v: %d calls, more than offered", rate, cfg.Duration, p.Calls)
				}
			}
			c.close()
			cancel()
			if err := <-errc; err != nil {
				t.Errorf("serve after cancel: %v", err)
			}
		})
	}
}

func TestConfigErrors(t *testing.T) {
	ok := Config{Binary: "sparrow", Modes: []Mode{Bare}, Rates: []float64{0}, Duration: time.Second}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no binary", func(c *Config) { c.Binary = "" }, "no binary"},
		{"no modes", func(c *Config) { c.Modes = nil }, "no modes"},
		{"no rates", func(c *Config) { c.Rates = nil }, "no rates"},
		{"negative rate", func(c *Config) { c.Rates = []float64{-1} }, "negative"},
		{"zero duration", func(c *Config) { c.Duration = 0 }, "duration"},
	} {
		c := ok
		tc.edit(&c)
		err := c.validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.want)
		}
	}
	if err := ok.validate(); err != nil {
		t.Errorf("valid config refused: %v", err)
	}
	if _, err := ParseMode("grpc"); err == nil || !strings.Contains(err.Error(), "grpc") {
		t.Errorf("ParseMode(grpc) = %v, want an error naming it", err)
	}
}

func TestParseModesAndRates(t *testing.T) {
	for _, c := range []struct {
		modes, rates string
		want         string // error, or "" for none
	}{
		{modes: "bare, rpc", rates: "0, 100,1000"},
		{modes: "bare,grpc", rates: "0", want: `unknown ping-pong mode "grpc"`},
		{modes: "rpc", rates: "x", want: `--rates: "x" is not a rate (calls/s, 0 for flat out)`},
		{modes: "rpc", rates: "-1", want: `--rates: "-1" is not a rate`},
		{modes: "rpc", rates: "1,", want: `--rates: "" is not a rate`},
	} {
		ms, err := ParseModes(c.modes)
		if err == nil {
			var rs []float64
			rs, err = ParseRates(c.rates)
			if err == nil && (len(ms) == 0 || len(rs) == 0) {
				t.Errorf("%q %q: %v %v", c.modes, c.rates, ms, rs)
			}
		}
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%q %q: error %v, want %q", c.modes, c.rates, err, c.want)
		}
	}
}

func TestOptionsFlags(t *testing.T) {
	var o Options
	fs := pflag.NewFlagSet("pingpong", pflag.ContinueOnError)
	o.AddFlags(fs)
	if err := fs.Parse([]string{"--rates", "0,500"}); err != nil {
		t.Fatal(err)
	}
	if err := o.Validate(); err != nil || !slices.Equal(o.Modes, []Mode{Bare, RPC}) || !slices.Equal(o.Rates, []float64{0, 500}) ||
		o.Duration != 5*time.Second || o.Listen != "127.0.0.1:0" {
		t.Errorf("options %+v, %v", o.Config, err)
	}
	if f := fs.Lookup(strings.TrimPrefix(ServeArgs[len(ServeArgs)-1], "--")); f == nil || !f.Hidden {
		t.Errorf("the server's flag %v is not a hidden flag", ServeArgs)
	}
}
