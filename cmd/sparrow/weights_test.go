package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLoadWeights(t *testing.T) {
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
			got, err := loadWeights(tt.file, tt.flags)
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
