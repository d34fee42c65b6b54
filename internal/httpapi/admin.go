package httpapi

import (
	"crypto/sha256"
	"crypto/subtle"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/rs/zerolog"
)

// The reasons an AdminGuard refuses a caller: the values of
// sparrow_http_refused_total's reason label.
const (
	// RefusedNotLocal: the caller is not on loopback and the daemon has
	// no token file, so only loopback callers may change its state.
	RefusedNotLocal = "not_local"
	// RefusedNoToken: the caller is not on loopback and presents no
	// "Authorization: Bearer" token.
	RefusedNoToken = "no_token"
	// RefusedWrongToken: the presented token is not the file's.
	RefusedWrongToken = "wrong_token"
	// RefusedTokenUnreadable: the token file could not be read (removed,
	// emptied or unreadable since start-up), so no token is accepted.
	RefusedTokenUnreadable = "token_unreadable"
	// RefusedCrossOrigin: a browser sent the request from another site's
	// page; a page must not change a daemon's state through the
	// operator's own loopback access.
	RefusedCrossOrigin = "cross_origin"
)

var refusalReasons = []string{RefusedNotLocal, RefusedNoToken, RefusedWrongToken, RefusedTokenUnreadable, RefusedCrossOrigin}

// MaxAdminTokenBytes bounds the token file, so that a path naming some
// large file by mistake is refused rather than read.
const MaxAdminTokenBytes = 4096

// refusedLogEvery is the least time between two log lines about refused
// callers; the refusals in between are counted into the next line.
const refusedLogEvery = 10 * time.Second

// AdminGuard decides who may call the operator endpoints that change a
// daemon's state: callers on loopback always, others only with
// "Authorization: Bearer <token>" where the token is the content of the
// token file (surrounding white space trimmed). Every refusal is answered
// 403 with a one-line reason, counted in sparrow_http_refused_total and
// logged at warn, at most once per refusedLogEvery. Read-only endpoints do
// not go through it.
//
// The token file is read at construction, to fail start-up on a missing or
// empty file, and again on each request that presents a token, so that a
// rotated token takes effect without a restart.
type AdminGuard struct {
	tokenFile string
	log       zerolog.Logger
	refused   *prometheus.CounterVec
	origin    *http.CrossOriginProtection

	mu       sync.Mutex
	lastLog  time.Time
	unlogged int
}

// NewAdminGuard returns a guard taking tokens from tokenFile; with
// tokenFile empty it admits loopback callers only. A missing, unreadable,
// empty or oversized token file is an error.
func NewAdminGuard(tokenFile string, log zerolog.Logger) (*AdminGuard, error) {
	if tokenFile != "" {
		if _, err := ReadAdminToken(tokenFile); err != nil {
			return nil, err
		}
	}
	return &AdminGuard{
		tokenFile: tokenFile,
		log:       log,
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "sparrow_http_refused_total",
			Help: "Requests to state-changing operator endpoints (POST /drain) refused with 403, by endpoint and reason: " +
				"not_local (not from loopback, and the daemon has no --http-admin-token-file), no_token (not from loopback, no bearer token), " +
				"wrong_token, token_unreadable (the token file can no longer be read), cross_origin (a browser request from another site's page).",
		}, []string{"endpoint", "reason"}),
		origin: http.NewCrossOriginProtection(),
	}, nil
}

// ReadAdminToken reads a token file: its content with surrounding white
// space trimmed, which must not be empty.
func ReadAdminToken(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("--http-admin-token-file: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxAdminTokenBytes+1))
	if err != nil {
		return "", fmt.Errorf("--http-admin-token-file: %w", err)
	}
	if len(b) > MaxAdminTokenBytes {
		return "", fmt.Errorf("--http-admin-token-file %s: larger than %d bytes; it should hold one token", path, MaxAdminTokenBytes)
	}
	tok := strings.TrimSpace(string(b))
	if tok == "" {
		return "", fmt.Errorf("--http-admin-token-file %s: the file is empty; write the token into it (for example: openssl rand -hex 32 > %s)", path, path)
	}
	return tok, nil
}

// AcceptsToken reports whether non-loopback callers may be admitted with
// a token (a token file is set).
func (g *AdminGuard) AcceptsToken() bool { return g.tokenFile != "" }

// Protect serves h only to the callers the guard admits; endpoint names
// the route in the metric and the log ("/drain").
func (g *AdminGuard) Protect(endpoint string, h http.HandlerFunc) http.Handler {
	for _, reason := range refusalReasons {
		g.refused.WithLabelValues(endpoint, reason)
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reason, why := g.admit(r)
		if reason == "" {
			h(w, r)
			return
		}
		g.refused.WithLabelValues(endpoint, reason).Inc()
		g.logRefusal(r, endpoint, reason)
		writeLine(w, http.StatusForbidden, "refused: "+why)
	})
}

// admit returns "" for a caller it admits, or the refusal's reason and a
// sentence for the caller.
func (g *AdminGuard) admit(r *http.Request) (reason, why string) {
	if err := g.origin.Check(r); err != nil {
		return RefusedCrossOrigin, "a browser request from another site's page"
	}
	if isLoopback(r.RemoteAddr) {
		return "", ""
	}
	if g.tokenFile == "" {
		return RefusedNotLocal, "only loopback callers may call this endpoint; the daemon has no --http-admin-token-file"
	}
	presented, ok := bearerToken(r.Header.Get("Authorization"))
	if !ok {
		return RefusedNoToken, "callers not on loopback need \"Authorization: Bearer <token>\" with the token in --http-admin-token-file"
	}
	want, err := ReadAdminToken(g.tokenFile)
	if err != nil {
		return RefusedTokenUnreadable, "the daemon cannot read its --http-admin-token-file (see its log)"
	}
	if !sameToken(presented, want) {
		return RefusedWrongToken, "the bearer token is not the one in --http-admin-token-file"
	}
	return "", ""
}

// isLoopback reports whether a request's RemoteAddr is a loopback
// address; an address that does not parse is not.
func isLoopback(remoteAddr string) bool {
	host, _, err := net.SplitHostPort(remoteAddr)
	if err != nil {
		return false
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}

// bearerToken is the token of an "Authorization: Bearer <token>" header
// value; the scheme is case-insensitive (RFC 9110).
func bearerToken(header string) (string, bool) {
	scheme, tok, ok := strings.Cut(strings.TrimSpace(header), " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	tok = strings.TrimSpace(tok)
	return tok, tok != ""
}

// sameToken compares in time independent of where the tokens differ and
// of their lengths: it compares their digests.
func sameToken(a, b string) bool {
	da, db := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(da[:], db[:]) == 1
}

// logRefusal logs a refusal at warn, unless one was logged less than
// refusedLogEvery ago; then it is counted into the next line.
func (g *AdminGuard) logRefusal(r *http.Request, endpoint, reason string) {
	g.mu.Lock()
	now := time.Now()
	if !g.lastLog.IsZero() && now.Sub(g.lastLog) < refusedLogEvery {
		g.unlogged++
		g.mu.Unlock()
		return
	}
	unlogged := g.unlogged
	g.lastLog, g.unlogged = now, 0
	g.mu.Unlock()
	ev := g.log.Warn().Str("endpoint", r.Method+" "+endpoint).Str("remote", r.RemoteAddr).Str("reason", reason).
		Int("refusals_not_logged", unlogged)
	if reason == RefusedTokenUnreadable {
		_, err := ReadAdminToken(g.tokenFile)
		ev = ev.Err(err)
	}
	ev.Msg("refused a caller of a state-changing operator endpoint (see docs/SECURITY.md)")
}

// Describe and Collect export sparrow_http_refused_total.
func (g *AdminGuard) Describe(ch chan<- *prometheus.Desc) { g.refused.Describe(ch) }

// Collect implements prometheus.Collector.
func (g *AdminGuard) Collect(ch chan<- prometheus.Metric) { g.refused.Collect(ch) }
