package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/internal/flagconfig"
)

// configureHTTP parses args into a command with the HTTP flags and
// --config, and applies its config file as a daemon command does before
// it runs.
func configureHTTP(t *testing.T, args []string) (*cobra.Command, *flagconfig.Config, error) {
	t.Helper()
	cmd := &cobra.Command{Use: "daemon"}
	var h HTTPFlags
	h.Register(cmd.Flags())
	flagconfig.Attach(cmd)
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	dc := &flagconfig.Config{File: cmd.Flags().Lookup("config").Value.String()}
	return cmd, dc, dc.Apply(cmd.Flags(), nil, flagconfig.CommandFlagNames(cmd))
}

func writeConfig(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHTTPFlagsOldName checks --metrics-listen against the new name,
// layered by internal/flagconfig as every daemon command does: the old
// flag on the command line beats the new key in the file, and the old
// key in a file sets the new flag, with a warning.
func TestHTTPFlagsOldName(t *testing.T) {
	file := writeConfig(t, "s.yaml", "http-listen: 127.0.0.1:9001\n")
	cmd, _, err := configureHTTP(t, []string{"--config", file, "--metrics-listen", "127.0.0.1:9002"})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := cmd.Flags().GetString("http-listen"); v != "127.0.0.1:9002" {
		t.Errorf("http-listen = %q, want the command line's --metrics-listen", v)
	}

	file = writeConfig(t, "s.yaml", "metrics-listen: 127.0.0.1:9003\n")
	cmd, dc, err := configureHTTP(t, []string{"--config", file})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := cmd.Flags().GetString("http-listen"); v != "127.0.0.1:9003" {
		t.Errorf("http-listen = %q, want the file's metrics-listen", v)
	}
	if len(dc.Warnings) != 1 || !strings.Contains(dc.Warnings[0], "deprecated") {
		t.Errorf("warnings = %q, want one about the old key", dc.Warnings)
	}

	file = writeConfig(t, "s.yaml", "metrics-listen: 127.0.0.1:9003\nhttp-listen: 127.0.0.1:9004\n")
	if _, _, err := configureHTTP(t, []string{"--config", file}); err == nil || !strings.Contains(err.Error(), "old name") {
		t.Errorf("both names in a file: err = %v", err)
	}
}
