package daemon

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

func TestGossipSeeds(t *testing.T) {
	for _, tc := range []struct {
		join string
		want []string
	}{
		{"", nil},
		{" , ", nil},
		{"10.0.0.1:7946", []string{"10.0.0.1:7946"}},
		{" a:1, b:2 ,,c:3", []string{"a:1", "b:2", "c:3"}},
	} {
		g := GossipFlags{Join: tc.join}
		if got := g.Seeds(); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("--join %q: seeds %q, want %q", tc.join, got, tc.want)
		}
	}
}

func TestParseAttrs(t *testing.T) {
	for _, tc := range []struct {
		in      []string
		want    map[string]string
		wantErr string
	}{
		{in: nil, want: nil},
		{in: []string{"rack=r1", "zone=", "mem=high=1"}, want: map[string]string{"rack": "r1", "zone": "", "mem": "high=1"}},
		{in: []string{"rack"}, wantErr: `--attr "rack": want key=value`},
		{in: []string{"=r1"}, wantErr: `--attr "=r1": want key=value`},
	} {
		got, err := ParseAttrs(tc.in)
		if tc.wantErr != "" {
			if err == nil || err.Error() != tc.wantErr {
				t.Errorf("%q: error %v, want %q", tc.in, err, tc.wantErr)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%q: %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
}

// TestSecurityKeyring covers where the gossip keys come from, and the
// mistakes refused or warned about.
func TestSecurityKeyring(t *testing.T) {
	key, err := membership.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	write := func(name string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(key+"\n"), mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	private, shared := write("private.keys", 0o600), write("shared.keys", 0o644)
	for _, tc := range []struct {
		name, file, env string
		inEnv           bool
		source          string // "" for no keyring
		err, warn       string
	}{
		{name: "neither"},
		{name: "file", file: private, source: private},
		{name: "file readable by others", file: shared, source: shared, warn: "chmod 600"},
		{name: "environment", env: key, inEnv: true, source: "$" + membership.GossipKeyEnv},
		{name: "both", file: private, env: key, inEnv: true, err: "both --gossip-key-file and $" + membership.GossipKeyEnv},
		{name: "a key for a path", file: key, err: "takes the path of a key file, not a key"},
		{name: "missing file", file: filepath.Join(dir, "none.keys"), err: "none.keys"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv(membership.GossipKeyEnv, tc.env)
			if !tc.inEnv {
				os.Unsetenv(membership.GossipKeyEnv)
			}
			var logged bytes.Buffer
			s := SecurityFlags{GossipKeyFile: tc.file}
			kr, source, err := s.Keyring(zerolog.New(&logged))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("error %v, want one saying %q", err, tc.err)
				}
				if strings.Contains(err.Error(), key) {
					t.Fatalf("the error echoes the key: %v", err)
				}
				return
			}
			if err != nil || source != tc.source || (kr != nil) != (tc.source != "") {
				t.Fatalf("keyring %v from %q, %v; want one from %q", kr, source, err, tc.source)
			}
			if !strings.Contains(logged.String(), tc.warn) || (tc.warn == "" && logged.Len() > 0) {
				t.Errorf("logged %q, want %q", logged.String(), tc.warn)
			}
		})
	}
}

// TestServeHTTPOff: without --http-listen nothing is served, and the
// server's methods do nothing.
func TestServeHTTPOff(t *testing.T) {
	var logged bytes.Buffer
	srv, err := ServeHTTP(HTTPFlags{Pprof: true}, zerolog.New(&logged), httpapi.Surface{})
	if err != nil {
		t.Fatal(err)
	}
	srv.ShuttingDown()
	srv.Close()
	if srv.Addr() != "" {
		t.Errorf("serving at %q without --http-listen", srv.Addr())
	}
	if !strings.Contains(logged.String(), "--pprof does nothing without --http-listen") {
		t.Errorf("logged %q, want the --pprof warning", logged.String())
	}
}

// TestDrainOnHTTP: a drain asked over HTTP runs stop, whose error is the
// shutdown's.
func TestDrainOnHTTP(t *testing.T) {
	for _, tc := range []struct {
		name    string
		stopErr error
		want    string
	}{
		{name: "clean"},
		{name: "close fails", stopErr: errors.New("boom"), want: "shutdown: boom"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			asked := make(chan struct{}, 1)
			asked <- struct{}{}
			var logged bytes.Buffer
			stopped := false
			err := DrainOnSignal(zerolog.New(&logged), asked, time.Second, func() error { stopped = true; return tc.stopErr })
			if !stopped || (err == nil) != (tc.want == "") || (err != nil && err.Error() != tc.want) {
				t.Fatalf("stopped %v, err %v; want stopped and %q", stopped, err, tc.want)
			}
			if !strings.Contains(logged.String(), "drain asked over HTTP") {
				t.Errorf("logged %q", logged.String())
			}
		})
	}
}

// Every flag the groups register has help.
func TestFlagGroupsHaveHelp(t *testing.T) {
	fs := pflag.NewFlagSet("daemon", pflag.ContinueOnError)
	new(GossipFlags).Register(fs)
	new(RPCFlags).Register(fs)
	new(SecurityFlags).Register(fs)
	new(HTTPFlags).Register(fs)
	new(LocalityFlags).Register(fs)
	fs.VisitAll(func(f *pflag.Flag) {
		if strings.TrimSpace(f.Usage) == "" {
			t.Errorf("--%s has no help", f.Name)
		}
	})
}
