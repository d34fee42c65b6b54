package flagconfig

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

// newCmd is a command with a few flags of the kinds daemons use.
func newCmd() (*cobra.Command, *Config) {
	cmd := &cobra.Command{Use: "d", RunE: func(*cobra.Command, []string) error { return nil }}
	fs := cmd.Flags()
	fs.Int("slots", 1, "slots")
	fs.String("queue", "fifo", "queue")
	fs.StringArray("attr", nil, "attributes")
	fs.String("http-listen", "", "listener")
	fs.String("metrics-listen", "", "old name of --http-listen")
	return cmd, Attach(cmd)
}

// TestApply checks, per setting, which source wins (flag, then
// environment, then file), and the errors and warnings a bad source gets.
func TestApply(t *testing.T) {
	for _, tc := range []struct {
		name     string
		file     string // YAML body, "" for none
		args     []string
		environ  []string
		known    []string // other commands' flags
		want     map[string]string
		err      string
		warnings []string
	}{
		{name: "flag beats environment beats file", file: "slots: 3\nqueue: fair\n", args: []string{"--slots", "5"},
			environ: []string{"SPARROW_SLOTS=4", "SPARROW_QUEUE=priority"}, want: map[string]string{"slots": "5", "queue": "priority"}},
		{name: "file alone", file: "slots: 3\nattr: [rack=r1, zone=z2]\n", want: map[string]string{"slots": "3", "attr": "[rack=r1,zone=z2]"}},
		{name: "environment list", environ: []string{"SPARROW_ATTR=a=1,b=2"}, want: map[string]string{"attr": "[a=1,b=2]"}},
		{name: "unknown file key", file: "slotz: 3\n", err: `unknown key "slotz"`},
		{name: "another command's key", file: "probe-ratio: 3\n", known: []string{"probe-ratio"}, err: "another sparrow command"},
		{name: "nested key", file: "weight:\n  alice: 2\n", err: "flat"},
		{name: "typo in the environment", environ: []string{"SPARROW_SLOTZ=3"}, warnings: []string{"SPARROW_SLOTZ names no flag"}},
		{name: "another command's variable is quiet", environ: []string{"SPARROW_PROBE_RATIO=3"}, known: []string{"probe-ratio"}},
		{name: "old key in a file", file: "metrics-listen: 127.0.0.1:1\n", want: map[string]string{"http-listen": "127.0.0.1:1"}, warnings: []string{"deprecated"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd, c := newCmd()
			if tc.file != "" {
				p := filepath.Join(t.TempDir(), "d.yaml")
				if err := os.WriteFile(p, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
				tc.args = append(tc.args, "--config", p)
			}
			if err := cmd.ParseFlags(tc.args); err != nil {
				t.Fatal(err)
			}
			known := map[string]bool{}
			for _, k := range tc.known {
				known[k] = true
			}
			err := c.Apply(cmd.Flags(), tc.environ, known)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for name, want := range tc.want {
				if got := cmd.Flags().Lookup(name).Value.String(); got != want {
					t.Errorf("--%s = %q, want %q", name, got, want)
				}
			}
			if len(c.Warnings) != len(tc.warnings) {
				t.Fatalf("warnings %q, want %d", c.Warnings, len(tc.warnings))
			}
			for i, w := range tc.warnings {
				if !strings.Contains(c.Warnings[i], w) {
					t.Errorf("warning %q lacks %q", c.Warnings[i], w)
				}
			}
		})
	}
}
