package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/flagconfig"
)

// configure parses args into a fresh daemon command and applies its
// config file and environ as the command does before it runs.
func configure(t *testing.T, newCmd func() *cobra.Command, args, environ []string) (*cobra.Command, *flagconfig.Config, error) {
	t.Helper()
	cmd := newCmd()
	if err := cmd.ParseFlags(args); err != nil {
		t.Fatalf("parse %v: %v", args, err)
	}
	dc := &flagconfig.Config{File: cmd.Flags().Lookup("config").Value.String()}
	return cmd, dc, dc.Apply(cmd.Flags(), environ, flagconfig.CommandFlagNames(rootCmd))
}

func writeConfig(t *testing.T, name, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestConfigPrecedence checks flag > environment > file > default, key by
// key, with the same settings in YAML and in TOML.
func TestConfigPrecedence(t *testing.T) {
	files := map[string]string{
		"scheduler.yaml": "probe-ratio: 3\nreservation-timeout: 7s\nseed: 11\ngossip-profile: wan\njoin: [10.0.0.1:7946, 10.0.0.2:7946]\n",
		"scheduler.toml": "probe-ratio = 3\nreservation-timeout = \"7s\"\nseed = 11\ngossip-profile = \"wan\"\njoin = [\"10.0.0.1:7946\", \"10.0.0.2:7946\"]\n",
	}
	for name, body := range files {
		t.Run(name, func(t *testing.T) {
			file := writeConfig(t, name, body)
			cmd, dc, err := configure(t, newSchedulerCmd,
				[]string{"--config", file, "--probe-ratio", "5"},
				[]string{"SPARROW_PROBE_RATIO=4", "SPARROW_RESERVATION_TIMEOUT=8s", "HOME=/root"})
			if err != nil {
				t.Fatal(err)
			}
			fs := cmd.Flags()
			if v, _ := fs.GetFloat64("probe-ratio"); v != 5 {
				t.Errorf("probe-ratio = %v, want 5 from the flag (env says 4, file 3)", v)
			}
			if v, _ := fs.GetDuration("reservation-timeout"); v != 8*time.Second {
				t.Errorf("reservation-timeout = %v, want 8s from the environment (file says 7s)", v)
			}
			if v, _ := fs.GetUint64("seed"); v != 11 {
				t.Errorf("seed = %v, want 11 from the file", v)
			}
			if v, _ := fs.GetString("gossip-profile"); v != "wan" {
				t.Errorf("gossip-profile = %q, want wan from the file", v)
			}
			if v, _ := fs.GetString("join"); v != "10.0.0.1:7946,10.0.0.2:7946" {
				t.Errorf("join = %q, want the file's list joined with commas", v)
			}
			if v, _ := fs.GetFloat64("constrained-probe-ratio"); v != 0 {
				t.Errorf("constrained-probe-ratio = %v, want the default 0", v)
			}
			if !slices.Equal(dc.FromEnv, []string{"reservation-timeout"}) {
				t.Errorf("from the environment: %v, want only reservation-timeout (the flag beat SPARROW_PROBE_RATIO)", dc.FromEnv)
			}
		})
	}
}

// TestConfigThroughTheCommand goes through the command's own pre-run hook,
// with the file named by $SPARROW_CONFIG.
func TestConfigThroughTheCommand(t *testing.T) {
	t.Setenv("SPARROW_CONFIG", writeConfig(t, "nm.yaml", "slots: 6\nattr: [rack=r1, zone=z2]\nqueue: fair\n"))
	t.Setenv("SPARROW_QUEUE", "priority")
	cmd := newNodeMonitorCmd()
	if err := cmd.ParseFlags([]string{"--slots", "7"}); err != nil {
		t.Fatal(err)
	}
	if err := cmd.PreRunE(cmd, nil); err != nil {
		t.Fatal(err)
	}
	fs := cmd.Flags()
	if v, _ := fs.GetInt("slots"); v != 7 {
		t.Errorf("slots = %d, want 7 from the flag", v)
	}
	if v, _ := fs.GetString("queue"); v != "priority" {
		t.Errorf("queue = %q, want priority from the environment", v)
	}
	if v, _ := fs.GetStringArray("attr"); !slices.Equal(v, []string{"rack=r1", "zone=z2"}) {
		t.Errorf("attr = %q, want the file's list", v)
	}
}

// TestConfigUnknownKeys checks that a file key that is no flag of the
// command is an error naming the key and the file, with a hint.
func TestConfigUnknownKeys(t *testing.T) {
	for _, tc := range []struct {
		name, file, body string
		newCmd           func() *cobra.Command
		want             []string
	}{
		{"typo", "s.yaml", "probe-ratio: 2\nprobe-ratoi: 3\n", newSchedulerCmd, []string{`unknown key "probe-ratoi"`, "s.yaml", "not a flag of this command"}},
		{"another command's flag", "s.toml", "slots = 3\n", newSchedulerCmd, []string{`unknown key "slots"`, "another sparrow command"}},
		{"secret", "nm.yaml", "gossip-key: c2VjcmV0c2VjcmV0c2VjcmV0\n", newNodeMonitorCmd, []string{`unknown key "gossip-key"`, "--gossip-key-file"}},
		{"nested", "nm.yaml", "weight:\n  alice: 2\n", newNodeMonitorCmd, []string{`unknown key "weight.alice"`, "flat"}},
		{"config in config", "e.yaml", "config: other.yaml\n", newExecutorCmd, []string{`unknown key "config"`}},
		{"help", "e.yaml", "help: true\n", newExecutorCmd, []string{`unknown key "help"`}},
		{"not YAML or TOML", "s.json", "{}", newSchedulerCmd, []string{"s.json", ".yaml, .yml or .toml"}},
		{"bad value names key and file", "s.yaml", "probe-ratio: fast\n", newSchedulerCmd, []string{"s.yaml", "key probe-ratio", "fast"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := writeConfig(t, tc.file, tc.body)
			_, _, err := configure(t, tc.newCmd, []string{"--config", file}, nil)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

// TestConfigEnvironment covers which SPARROW_ variables are read, which
// are ignored quietly and which are reported as likely typos.
func TestConfigEnvironment(t *testing.T) {
	environ := []string{
		"SPARROW_PROBE_RATOI=3",                       // typo: warned, ignored
		"SPARROW_SLOTS=3",                             // a node monitor flag: ignored by a scheduler
		"SPARROW_GOSSIP_KEY=c2VjcmV0c2VjcmV0c2VjcmV0", // a secret, not a setting
		"SPARROW_INTEROP_REQUIRE=1",                   // the test harness's
		"SPARROW_NET=10.218.0",                        // the compose files'
		"SPARROW_NO_CANCEL=true",
		"SPARROW_METRICS_LISTEN=127.0.0.1:9090", // old name of --http-listen
		"PATH=/usr/bin",
	}
	cmd, dc, err := configure(t, newSchedulerCmd, nil, environ)
	if err != nil {
		t.Fatal(err)
	}
	fs := cmd.Flags()
	if v, _ := fs.GetBool("no-cancel"); !v {
		t.Error("SPARROW_NO_CANCEL=true did not set --no-cancel")
	}
	if v, _ := fs.GetString("http-listen"); v != "127.0.0.1:9090" {
		t.Errorf("http-listen = %q, want the address from SPARROW_METRICS_LISTEN", v)
	}
	warned := strings.Join(dc.Warnings, "\n")
	for _, w := range []string{"$SPARROW_PROBE_RATOI names no flag", "$SPARROW_METRICS_LISTEN is deprecated; use $SPARROW_HTTP_LISTEN"} {
		if !strings.Contains(warned, w) {
			t.Errorf("warnings lack %q:\n%s", w, warned)
		}
	}
	for _, quiet := range []string{"SPARROW_SLOTS", "SPARROW_GOSSIP_KEY", "SPARROW_INTEROP_REQUIRE", "SPARROW_NET"} {
		if strings.Contains(warned, quiet+" ") {
			t.Errorf("%s was reported:\n%s", quiet, warned)
		}
	}
	if slices.Contains(dc.FromEnv, "gossip-key") || slices.Contains(dc.FromEnv, "slots") {
		t.Errorf("read from the environment: %v", dc.FromEnv)
	}

	// A bad value names its variable.
	_, _, err = configure(t, newSchedulerCmd, nil, []string{"SPARROW_PROBE_RATIO=fast"})
	if err == nil || !strings.Contains(err.Error(), "$SPARROW_PROBE_RATIO") {
		t.Errorf("bad variable: err = %v, want it named", err)
	}
	// A repeatable flag takes comma-separated values.
	cmd, _, err = configure(t, newNodeMonitorCmd, nil, []string{"SPARROW_ATTR=rack=r1,zone=z2"})
	if err != nil {
		t.Fatal(err)
	}
	if v, _ := cmd.Flags().GetStringArray("attr"); !slices.Equal(v, []string{"rack=r1", "zone=z2"}) {
		t.Errorf("attr = %q from SPARROW_ATTR", v)
	}
}

// TestEveryDaemonFlagHasHelp checks that the daemons' flags, config and
// HTTP ones included, all have help text, that the coordinator has
// --locality, and that --help documents the old --metrics-listen name.
func TestEveryDaemonFlagHasHelp(t *testing.T) {
	if newCoordinatorCmd().Flags().Lookup("locality") == nil {
		t.Error("no coordinator --locality flag")
	}
	for _, newCmd := range []func() *cobra.Command{newSchedulerCmd, newNodeMonitorCmd, newCoordinatorCmd, newExecutorCmd, newStatusCmd} {
		cmd := newCmd()
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if strings.TrimSpace(f.Usage) == "" {
				t.Errorf("%s --%s has no help", cmd.Name(), f.Name)
			}
		})
	}
	var out strings.Builder
	cmd := newSchedulerCmd()
	cmd.SetOut(&out)
	cmd.SetArgs([]string{"--help"})
	if err := cmd.Execute(); err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"--http-listen", "--metrics-listen is its old name", "--pprof", "--config", "SPARROW_LOG_LEVEL"} {
		if !strings.Contains(out.String(), w) {
			t.Errorf("scheduler --help lacks %q", w)
		}
	}
}
