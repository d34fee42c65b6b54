package main

import (
	"reflect"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/core/placement"
)

func TestParseConstraint(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    client.Constraint
		wantErr bool
	}{
		{in: "mem=high", want: client.Constraint{Key: "mem", Op: "=", Values: []string{"high"}}},
		{in: " mem = high|huge ", want: client.Constraint{Key: "mem", Op: "=", Values: []string{"high", "huge"}}},
		{in: "rack!=r1", want: client.Constraint{Key: "rack", Op: "!=", Values: []string{"r1"}}},
		{in: "gpu", want: client.Constraint{Key: "gpu", Op: "exists"}},
		{in: "", wantErr: true},
		{in: "=high", wantErr: true},
		{in: "mem=", wantErr: true},
		{in: "mem=a||b", wantErr: true},
		{in: "!=x", wantErr: true},
	} {
		got, err := parseConstraint(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("parseConstraint(%q) error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("parseConstraint(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// FuzzParseConstraint: whatever parses is a constraint the scheduler
// accepts, and a parsed "key=values" renders back to the same key.
func FuzzParseConstraint(f *testing.F) {
	for _, s := range []string{"mem=high", "rack!=a|b", "gpu", "", "a=b=c", "x!=", "|=|"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := parseConstraint(s)
		if err != nil {
			return
		}
		pc := placement.Constraint{Key: c.Key, Op: c.Op, Values: c.Values}
		if err := pc.Validate(); err != nil {
			t.Fatalf("parseConstraint(%q) = %+v, which the scheduler refuses: %v", s, c, err)
		}
		if !strings.Contains(s, c.Key) {
			t.Fatalf("parseConstraint(%q): key %q not in the input", s, c.Key)
		}
	})
}

// The retry policy's flags exist with the driver's defaults, and the old
// --submit-retry is still accepted (deprecated) so scripts keep working.
func TestDriveRetryFlags(t *testing.T) {
	fs := newDriveCmd().Flags()
	for _, tc := range []struct{ flag, want string }{
		{"retry-base", "100ms"},
		{"retry-max", "10s"},
		{"retry-budget", "0.1"},
		{"retry-window", "10s"},
		{"retry-budget-min", "1000"},
	} {
		f := fs.Lookup(tc.flag)
		if f == nil {
			t.Errorf("--%s: not defined", tc.flag)
			continue
		}
		if f.DefValue != tc.want || f.Usage == "" {
			t.Errorf("--%s: default %q, usage %q; want default %q and a usage", tc.flag, f.DefValue, f.Usage, tc.want)
		}
	}
	if f := fs.Lookup("submit-retry"); f == nil || f.Deprecated == "" {
		t.Errorf("--submit-retry: %+v, want a deprecated flag", f)
	}
	if err := fs.Parse([]string{"--submit-retry=50ms", "--retry-budget=0.2"}); err != nil {
		t.Errorf("parse: %v", err)
	}
}
