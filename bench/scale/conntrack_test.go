package scale

import (
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func fakeProc(files map[string]string) readFile {
	return func(path string) ([]byte, error) {
		s, ok := files[path]
		if !ok {
			return nil, fs.ErrNotExist
		}
		return []byte(s), nil
	}
}

func TestCheckConntrack(t *testing.T) {
	for _, tc := range []struct {
		name    string
		members int
		files   map[string]string
		want    string // substring of the error; empty for none
	}{
		{"untracked host", 1004, nil, ""},
		{"unreadable limit", 1004, map[string]string{conntrackMaxPath: "lots\n"}, ""},
		{"room for every pair", 104, map[string]string{conntrackMaxPath: "262144\n"}, ""},
		{"thousand members over the default", 1004, map[string]string{conntrackMaxPath: "262144\n"}, "nf_conntrack_max=1048576"},
		{"thousand members with a raised limit", 1004, map[string]string{conntrackMaxPath: "4194304\n"}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := checkConntrack(tc.members, fakeProc(tc.files))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestConntrackNeedCoversEveryPair(t *testing.T) {
	for _, n := range []int{2, 100, 1004} {
		if got, pairs := conntrackNeed(n), n*(n-1)/2; got < pairs {
			t.Errorf("conntrackNeed(%d) = %d, below the %d pairs of members", n, got, pairs)
		}
	}
}

func TestConntrackCountReadsProc(t *testing.T) {
	c, ok := conntrackCount(fakeProc(map[string]string{conntrackCountPath: " 437405\n"}))
	if !ok || c != 437405 {
		t.Fatalf("conntrackCount = %d, %v; want 437405, true", c, ok)
	}
	if _, ok := conntrackCount(func(string) ([]byte, error) { return nil, errors.New("denied") }); ok {
		t.Fatal("an unreadable count reads as known")
	}
}
