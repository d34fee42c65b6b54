package daemon

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
)

// TestServeHTTPRefusesABadTokenFile checks that a daemon does not start
// its operator endpoint with a token file it cannot use.
func TestServeHTTPRefusesABadTokenFile(t *testing.T) {
	for _, tc := range []struct {
		name, file, want string
	}{
		{"missing", filepath.Join(t.TempDir(), "absent"), "no such file"},
		{"empty", writeFile(t, ""), "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ServeHTTP(HTTPFlags{Addr: "127.0.0.1:0", AdminTokenFile: tc.file}, zerolog.Nop(), httpapi.Surface{})
			if err == nil || !strings.Contains(err.Error(), "--http-admin-token-file") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one naming --http-admin-token-file and %q", err, tc.want)
			}
		})
	}
}

// writeFile writes content to a file in a test directory.
func writeFile(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
