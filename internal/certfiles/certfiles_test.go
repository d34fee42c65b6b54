package certfiles

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// TestWriteCAAndIssue: the CA and a member's files are written with their
// modes, and nothing is replaced without force.
func TestWriteCAAndIssue(t *testing.T) {
	dir := t.TempDir()
	ca := filepath.Join(dir, "ca")
	if _, _, err := WriteCA(ca, rpc.CertOptions{Name: "test CA"}, false); err != nil {
		t.Fatal(err)
	}
	if _, _, err := WriteCA(ca, rpc.CertOptions{Name: "test CA"}, false); err == nil || !strings.Contains(err.Error(), "already exists") {
		t.Errorf("second CA without force: %v", err)
	}
	out := filepath.Join(dir, "m")
	f, err := Issue(ca, out, rpc.CertOptions{Name: "m1", Hosts: []string{"127.0.0.1"}}, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		path string
		mode os.FileMode
	}{{f.Key, 0o600}, {f.Cert, 0o644}, {f.CA, 0o644}, {filepath.Join(ca, CAKeyFile), 0o600}} {
		st, err := os.Stat(tc.path)
		if err != nil || st.Mode().Perm() != tc.mode {
			t.Errorf("%s: %v, mode %v, want %v", tc.path, err, st.Mode().Perm(), tc.mode)
		}
	}
	for _, tc := range []struct {
		name, want string
		force      bool
	}{
		{"m1", "already exists", false},
		{"ca", "clash", false},
		{"../x", "want letters", false},
		{"m1", "", true},
	} {
		_, err := Issue(ca, out, rpc.CertOptions{Name: tc.name}, tc.force)
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
			t.Errorf("issue %q (force %v): %v, want %q", tc.name, tc.force, err, tc.want)
		}
	}
}
