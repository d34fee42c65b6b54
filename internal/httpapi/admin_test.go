package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/rs/zerolog"
)

// writeToken writes content to a token file in a test directory.
func writeToken(t *testing.T, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// guarded is a guard's /drain handler that records whether it ran.
func guarded(t *testing.T, g *AdminGuard) (http.Handler, *bool) {
	t.Helper()
	ran := new(bool)
	return g.Protect("/drain", func(w http.ResponseWriter, _ *http.Request) {
		*ran = true
		w.WriteHeader(http.StatusAccepted)
	}), ran
}

// refusals is the guard's count of /drain refusals for reason.
func refusals(t *testing.T, g *AdminGuard, reason string) float64 {
	t.Helper()
	var m dto.Metric
	if err := g.refused.WithLabelValues("/drain", reason).Write(&m); err != nil {
		t.Fatal(err)
	}
	return m.GetCounter().GetValue()
}

// post sends POST /drain from remote with the given headers to h.
func post(h http.Handler, remote string, headers map[string]string) *httptest.ResponseRecorder {
	r := httptest.NewRequest(http.MethodPost, "http://10.0.0.9:9100/drain", nil)
	r.RemoteAddr = remote
	for k, v := range headers {
		r.Header.Set(k, v)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

// TestAdminGuardAdmits checks who may call a guarded endpoint, with and
// without a token file: loopback always (unless a browser sends the
// request from another site), others only with the file's token.
func TestAdminGuardAdmits(t *testing.T) {
	const token = "s3cret-token"
	file := writeToken(t, "  "+token+"\n")
	bearer := func(tok string) map[string]string { return map[string]string{"Authorization": "Bearer " + tok} }
	for _, tc := range []struct {
		name    string
		file    string
		remote  string
		headers map[string]string
		reason  string // "" when admitted
	}{
		{"loopback, no file", "", "127.0.0.1:40000", nil, ""},
		{"other loopback address, no file", "", "127.8.9.10:40000", nil, ""},
		{"IPv6 loopback, no file", "", "[::1]:40000", nil, ""},
		{"IPv4-mapped loopback, no file", "", "[::ffff:127.0.0.1]:40000", nil, ""},
		{"remote, no file", "", "10.1.2.3:5555", nil, RefusedNotLocal},
		{"remote with a token, no file", "", "10.1.2.3:5555", bearer(token), RefusedNotLocal},
		{"remote IPv6, no file", "", "[fd00::1]:5555", nil, RefusedNotLocal},
		{"unparsable peer", "", "pipe", nil, RefusedNotLocal},
		{"loopback, file, no token", file, "127.0.0.1:40000", nil, ""},
		{"loopback, file, wrong token", file, "127.0.0.1:40000", bearer("nope"), ""},
		{"remote, right token", file, "10.1.2.3:5555", bearer(token), ""},
		{"remote, right token, lower-case scheme", file, "10.1.2.3:5555", map[string]string{"Authorization": "bearer " + token}, ""},
		{"remote, no token", file, "10.1.2.3:5555", nil, RefusedNoToken},
		{"remote, empty bearer", file, "10.1.2.3:5555", map[string]string{"Authorization": "Bearer "}, RefusedNoToken},
		{"remote, basic auth", file, "10.1.2.3:5555", map[string]string{"Authorization": "Basic dXNlcjpwYXNz"}, RefusedNoToken},
		{"remote, wrong token", file, "10.1.2.3:5555", bearer("s3cret-tokeN"), RefusedWrongToken},
		{"remote, token prefix", file, "10.1.2.3:5555", bearer("s3cret"), RefusedWrongToken},
		{"remote, right token, same-origin browser", file, "10.1.2.3:5555", map[string]string{"Authorization": "Bearer " + token, "Sec-Fetch-Site": "same-origin"}, ""},
		{"loopback, cross-site browser", "", "127.0.0.1:40000", map[string]string{"Sec-Fetch-Site": "cross-site"}, RefusedCrossOrigin},
		{"loopback, other origin", "", "127.0.0.1:40000", map[string]string{"Origin": "http://evil.example"}, RefusedCrossOrigin},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := NewAdminGuard(tc.file, zerolog.Nop())
			if err != nil {
				t.Fatal(err)
			}
			h, ran := guarded(t, g)
			w := post(h, tc.remote, tc.headers)
			if tc.reason == "" {
				if !*ran || w.Code != http.StatusAccepted {
					t.Fatalf("refused (%d %q), want admitted", w.Code, w.Body)
				}
				return
			}
			if *ran || w.Code != http.StatusForbidden || !strings.HasPrefix(w.Body.String(), "refused: ") {
				t.Fatalf("got %d %q (handler ran: %v), want 403 \"refused: ...\"", w.Code, w.Body, *ran)
			}
			if got := refusals(t, g, tc.reason); got != 1 {
				t.Errorf("sparrow_http_refused_total{reason=%q} = %v, want 1", tc.reason, got)
			}
		})
	}
}

// TestAdminGuardRereadsTheFile rotates the token in place, then removes
// the file: the new token works at once, the old one no longer, and with
// no file no token is accepted.
func TestAdminGuardRereadsTheFile(t *testing.T) {
	file := writeToken(t, "old")
	g, err := NewAdminGuard(file, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	h, _ := guarded(t, g)
	call := func(tok string) int {
		return post(h, "10.1.2.3:5555", map[string]string{"Authorization": "Bearer " + tok}).Code
	}
	for _, step := range []struct {
		name   string
		change func()
		token  string
		want   int
	}{
		{"old token", func() {}, "old", 202},
		{"old token after rotation", func() { os.WriteFile(file, []byte("new\n"), 0o600) }, "old", 403},
		{"new token after rotation", func() {}, "new", 202},
		{"emptied file", func() { os.WriteFile(file, nil, 0o600) }, "new", 403},
		{"removed file", func() { os.Remove(file) }, "new", 403},
	} {
		step.change()
		if got := call(step.token); got != step.want {
			t.Errorf("%s: %d, want %d", step.name, got, step.want)
		}
	}
	if got := refusals(t, g, RefusedTokenUnreadable); got != 2 {
		t.Errorf("token_unreadable refusals = %v, want 2", got)
	}
}

// TestAdminGuardStartup checks the token files start-up refuses, each
// with an error naming the flag.
func TestAdminGuardStartup(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name string
		path string
		want string
	}{
		{"missing", filepath.Join(dir, "absent"), "no such file"},
		{"empty", writeToken(t, ""), "empty"},
		{"white space only", writeToken(t, " \n\t\n"), "empty"},
		{"too large", writeToken(t, strings.Repeat("x", MaxAdminTokenBytes+1)), "larger than"},
		{"a directory", dir, "--http-admin-token-file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewAdminGuard(tc.path, zerolog.Nop())
			if err == nil || !strings.Contains(err.Error(), "--http-admin-token-file") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err = %v, want one naming --http-admin-token-file and %q", err, tc.want)
			}
		})
	}
}

// TestAdminGuardLogsRefusalsRateLimited refuses a burst of callers: the
// first is logged at once, the rest are counted into the next line, which
// comes no sooner than refusedLogEvery later.
func TestAdminGuardLogsRefusalsRateLimited(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var buf bytes.Buffer
		g, err := NewAdminGuard("", zerolog.New(&buf))
		if err != nil {
			t.Fatal(err)
		}
		h, _ := guarded(t, g)
		refuse := func(n int) {
			for range n {
				post(h, "10.1.2.3:5555", nil)
			}
		}
		lines := func() []map[string]any {
			var out []map[string]any
			for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
				if l == "" {
					continue
				}
				var m map[string]any
				if err := json.Unmarshal([]byte(l), &m); err != nil {
					t.Fatalf("log line %q: %v", l, err)
				}
				out = append(out, m)
			}
			return out
		}
		refuse(5)
		if got := lines(); len(got) != 1 || got[0]["level"] != "warn" || got[0]["reason"] != RefusedNotLocal || got[0]["remote"] != "10.1.2.3:5555" {
			t.Fatalf("after a burst of 5: log %v, want one warn line", got)
		}
		time.Sleep(refusedLogEvery - time.Millisecond)
		refuse(1)
		if got := lines(); len(got) != 1 {
			t.Fatalf("within %v of the first line: %d lines, want 1", refusedLogEvery, len(got))
		}
		time.Sleep(time.Millisecond)
		refuse(1)
		got := lines()
		if len(got) != 2 || got[1]["refusals_not_logged"] != float64(5) {
			t.Fatalf("after %v: log %v, want a second line counting 5 refusals not logged", refusedLogEvery, got)
		}
		if n := refusals(t, g, RefusedNotLocal); n != 7 {
			t.Errorf("refusals counted = %v, want 7", n)
		}
	})
}

// TestServedDrainIsGuarded serves a drain hook behind a token guard: the
// refusal metric is on /metrics, with zeros from the start, and a
// loopback caller drains without a token.
func TestServedDrainIsGuarded(t *testing.T) {
	g, err := NewAdminGuard(writeToken(t, "tok"), zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{}, 1)
	s := serve(t, Config{Drain: func() { started <- struct{}{} }, Admin: g})
	base := "http://" + s.Addr()
	_, metrics := get(t, base+"/metrics")
	if want := `sparrow_http_refused_total{endpoint="/drain",reason="not_local"} 0`; !strings.Contains(metrics, want) {
		t.Errorf("/metrics lacks %s", want)
	}
	resp, err := http.Post(base+"/drain", "text/plain", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		t.Fatalf("POST /drain from loopback: %d, want 202", resp.StatusCode)
	}
	<-started
}

// FuzzBearerToken checks the Authorization parser never panics, and that
// what it accepts is a non-empty token with no surrounding white space.
func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer  abc ", "Basic abc", "Bearer", "", "Bearer \t"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, header string) {
		tok, ok := bearerToken(header)
		if ok && (tok == "" || tok != strings.TrimSpace(tok)) {
			t.Errorf("bearerToken(%q) = %q, true", header, tok)
		}
		if !ok && tok != "" {
			t.Errorf("bearerToken(%q) = %q, false", header, tok)
		}
	})
}
