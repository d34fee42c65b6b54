package procs

import (
	"bytes"
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	cases := []struct {
		name, stat string
		want       time.Duration
		err        bool
	}{
		{"plain", "1234 (sparrow) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 9 0 100 0 0", 3250 * time.Millisecond, false},
		{"name with spaces and parens", "7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 5 0 0", 30 * time.Millisecond, false},
		{"no name", "7 R 1", 0, true},
		{"short", "7 (x) R 1 2 3", 0, true},
		{"not a number", "7 (x) R 1 7 7 0 -1 0 0 0 0 0 x 2 0", 0, true},
	}
	for _, c := range cases {
		got, err := parseStatCPU([]byte(c.stat))
		if (err != nil) != c.err || got != c.want {
			t.Errorf("%s: got %v, %v; want %v, error %v", c.name, got, err, c.want, c.err)
		}
	}
}

func TestStatusKB(t *testing.T) {
	s := []byte("Name:\tsparrow\nVmHWM:\t   20480 kB\nVmRSS:\t   10240 kB\n")
	if v, ok := statusKB(s, "VmHWM:"); !ok || v != 20480*1024 {
		t.Errorf("VmHWM: %d %v", v, ok)
	}
	if _, ok := statusKB(s, "VmSwap:"); ok {
		t.Error("VmSwap: found in a status without it")
	}
}

func TestIOCount(t *testing.T) {
	io := []byte("rchar: 6976\nwchar: 0\nsyscr: 10\nsyscw: 3\nread_bytes: 0\n")
	for _, c := range []struct {
		key  string
		want int64
		ok   bool
	}{{"syscr:", 10, true}, {"syscw:", 3, true}, {"cancelled_write_bytes:", 0, false}} {
		if v, ok := ioCount(io, c.key); v != c.want || ok != c.ok {
			t.Errorf("%s: got %d %v, want %d %v", c.key, v, ok, c.want, c.ok)
		}
	}
}

// TestReadUsageSelf reads this test process: it has run code, so its CPU
// time and peak RSS are above zero.
func TestReadUsageSelf(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc")
	}
	x := 0
	for i := range 50_000_000 {
		x += i
	}
	_ = x
	u, err := ReadUsage(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if u.CPU <= 0 || u.PeakRSS <= 0 || u.RSS <= 0 {
		t.Errorf("usage %+v: want positive CPU and memory", u)
	}
}

func FuzzParseStatCPU(f *testing.F) {
	f.Add([]byte("1234 (sparrow) S 1 1234 1234 0 -1 4194560 100 0 0 0 250 75 0 0 20 0 9 0 100 0 0"))
	f.Add([]byte("7 ()) R"))
	f.Fuzz(func(t *testing.T, stat []byte) {
		if d, err := parseStatCPU(stat); err == nil && d < 0 && !bytes.Contains(stat, []byte("-")) {
			t.Fatalf("negative CPU %v from %q without a minus sign", d, stat)
		}
	})
}
