package scheduler

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestFrontendBook: the latest registration of an app wins, deregistering
// an address removes exactly the apps registered there, and the number
// of apps is bounded.
func TestFrontendBook(t *testing.T) {
	type reg struct{ app, addr string }
	tests := []struct {
		name       string
		regs       []reg
		deregister string
		wantGone   []string
		want       map[string]string // app -> address after
	}{
		{name: "latest registration wins", regs: []reg{{"a", "f1:1"}, {"a", "f2:1"}}, want: map[string]string{"a": "f2:1"}},
		{name: "deregister one address", regs: []reg{{"a", "f1:1"}, {"b", "f1:1"}, {"c", "f2:1"}}, deregister: "f1:1",
			wantGone: []string{"a", "b"}, want: map[string]string{"c": "f2:1"}},
		{name: "an app moved away is kept", regs: []reg{{"a", "f1:1"}, {"a", "f2:1"}}, deregister: "f1:1",
			want: map[string]string{"a": "f2:1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFrontendBook(0, 0, func(time.Duration) time.Duration { return 0 })
			for _, r := range tt.regs {
				if err := f.register(r.app, r.addr); err != nil {
					t.Fatal(err)
				}
			}
			if tt.deregister != "" {
				gone, _ := f.deregister(tt.deregister)
				slices.Sort(gone)
				if !slices.Equal(gone, tt.wantGone) {
					t.Fatalf("deregistered %v, want %v", gone, tt.wantGone)
				}
			}
			for app, addr := range tt.want {
				if got, batched, ok := f.lookup(app, "any request"); !ok || got != addr || batched {
					t.Fatalf("%s -> %q, %v; want %q", app, got, ok, addr)
				}
			}
			if st := f.snapshot(); st.Apps != len(tt.want) {
				t.Fatalf("%d apps counted, want %d", st.Apps, len(tt.want))
			}
		})
	}
}

// TestFrontendBookBound: past maxFrontends apps, a new app is refused
// with the bound named; a known app may still move.
func TestFrontendBookBound(t *testing.T) {
	f := newFrontendBook(0, 0, func(time.Duration) time.Duration { return 0 })
	f.maxApps = 16
	for i := range f.maxApps {
		f.apps["app"+strconv.Itoa(i)] = "f:1"
	}
	if err := f.register("new", "f:1"); err == nil || !strings.Contains(err.Error(), "too many apps") {
		t.Fatalf("app past the bound: %v, want refused", err)
	}
	if err := f.register("app0", "g:1"); err != nil {
		t.Fatalf("a known app moving: %v", err)
	}
}
