package main

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/internal/buildinfo"
)

// `sparrow version` and `sparrow --version` print this build; --json
// prints it as an object.
func TestVersionCommand(t *testing.T) {
	want := buildinfo.Read()
	for _, tc := range []struct {
		args []string
		json bool
	}{
		{[]string{"version"}, false},
		{[]string{"--version"}, false},
		{[]string{"version", "--json"}, true},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var out bytes.Buffer
			rootCmd.SetOut(&out)
			rootCmd.SetArgs(tc.args)
			t.Cleanup(func() { rootCmd.SetOut(nil); rootCmd.SetArgs(nil) })
			if err := rootCmd.Execute(); err != nil {
				t.Fatal(err)
			}
			if tc.json {
				var got buildinfo.Info
				if err := json.Unmarshal(out.Bytes(), &got); err != nil || got != want {
					t.Fatalf("version --json = %s (%v), want %+v", out.String(), err, want)
				}
				return
			}
			if out.String() != want.String()+"\n" {
				t.Fatalf("%v printed %q, want %q", tc.args, out.String(), want.String()+"\n")
			}
		})
	}
}
