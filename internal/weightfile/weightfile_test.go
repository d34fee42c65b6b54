package weightfile

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/queue"
)

func TestLoad(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "weights")
	os.WriteFile(file, []byte("# shares\nalice=3\n\nbob = 1.5\n"), 0o600)
	bad := filepath.Join(dir, "bad")
	os.WriteFile(bad, []byte("alice=3\nbob=0\n"), 0o600)

	tests := []struct {
		name    string
		file    string
		flags   []string
		want    map[string]float64
		wantErr string
	}{
		{name: "none", want: map[string]float64{}},
		{name: "file", file: file, want: map[string]float64{"alice": 3, "bob": 1.5}},
		{name: "flags override the file", file: file, flags: []string{"bob=2", "carol=1"}, want: map[string]float64{"alice": 3, "bob": 2, "carol": 1}},
		{name: "bad line names the line", file: bad, wantErr: "line 2"},
		{name: "missing file", file: filepath.Join(dir, "nope"), wantErr: "weights file"},
		{name: "flag without =", flags: []string{"alice"}, wantErr: "want user=weight"},
		{name: "flag not a number", flags: []string{"alice=x"}, wantErr: "not a number"},
		{name: "negative weight", flags: []string{"alice=-1"}, wantErr: "not > 0"},
		{name: "NaN weight", flags: []string{"alice=NaN"}, wantErr: "NaN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Load(tt.file, tt.flags)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(tt.want) {
				t.Fatalf("got %v, want %v", got, tt.want)
			}
			for u, w := range tt.want {
				if got[u] != w {
					t.Errorf("weight of %s = %v, want %v", u, got[u], w)
				}
			}
		})
	}
}

func TestReloader(t *testing.T) {
	file := filepath.Join(t.TempDir(), "weights")
	var got []map[string]float64
	set := func(w map[string]float64) error {
		if w["bob"] == 5 {
			return errors.New("refused")
		}
		got = append(got, w)
		return nil
	}
	var logs bytes.Buffer
	reload := Reloader(zerolog.New(&logs), file, []string{"carol=2"}, set)
	for _, c := range []struct {
		content string
		calls   int
		log     string
	}{
		{"alice=3\n", 1, "weights reloaded"},
		{"alice=0\n", 1, "line 1"},
		{"bob=5\n", 1, "refused"},
		{"bob=4\n", 2, "weights reloaded"},
	} {
		if err := os.WriteFile(file, []byte(c.content), 0o600); err != nil {
			t.Fatal(err)
		}
		logs.Reset()
		reload()
		if len(got) != c.calls || !strings.Contains(logs.String(), c.log) {
			t.Errorf("%q: %d weight sets, log %q; want %d and %q", c.content, len(got), logs.String(), c.calls, c.log)
		}
	}
	if last := got[len(got)-1]; last["bob"] != 4 || last["carol"] != 2 || len(last) != 2 {
		t.Errorf("last weights %v", last)
	}
}

// FuzzLoad: any weights file is either refused with an error naming the
// file and line, or loaded into weights the queues accept, for users with
// names; written back as "user=weight" lines, they load the same.
func FuzzLoad(f *testing.F) {
	for _, s := range []string{"# shares\nalice=3\n\nbob = 1.5\n", "alice=3\nbob=0\n", "=1\n", "a=b\n", "a=1e400\n", "a=NaN\n", " x = 2 \n#y=1\n"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		file := filepath.Join(t.TempDir(), "weights")
		if err := os.WriteFile(file, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
		got, err := Load(file, nil)
		if err != nil {
			if !strings.Contains(err.Error(), file) {
				t.Fatalf("error %q does not name the file", err)
			}
			return
		}
		var again strings.Builder
		for user, w := range got {
			if user == "" || strings.ContainsAny(user, "=\n") {
				t.Fatalf("user %q loaded from %q", user, data)
			}
			if err := queue.CheckWeight(w); err != nil {
				t.Fatalf("weight %v of %q loaded: %v", w, user, err)
			}
			if strings.HasPrefix(user, "#") {
				continue // would be a comment written back
			}
			fmt.Fprintf(&again, "%s=%s\n", user, strconv.FormatFloat(w, 'g', -1, 64))
		}
		if err := os.WriteFile(file, []byte(again.String()), 0o600); err != nil {
			t.Fatal(err)
		}
		back, err := Load(file, nil)
		if err != nil {
			t.Fatalf("weights written back do not load: %v\n%s", err, again.String())
		}
		for user, w := range got {
			if !strings.HasPrefix(user, "#") && back[user] != w {
				t.Fatalf("user %q: weight %v written back, %v loaded", user, w, back[user])
			}
		}
	})
}
