package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/pprof"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/internal/buildinfo"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// Config says what a Server serves.
type Config struct {
	// Addr is the "host:port" to listen on; port 0 picks a free port.
	Addr string
	// Collectors are exposed at /metrics, with Go runtime and process
	// metrics.
	Collectors []prometheus.Collector
	// Ready decides /readyz; nil means ready whenever the server runs.
	Ready Check
	// Status, if set, is served as JSON at /status. It is called once per
	// request, so it should be a cheap snapshot.
	Status func() Status
	// UI, if set, is served under /ui/ (the dashboard), and / redirects
	// there.
	UI http.Handler
	// Drain, if set, is started by POST /drain, once: /readyz fails from
	// then on, and the call answers 202 at once while Drain runs.
	Drain func()
	// Admin decides who may call the endpoints that change the daemon's
	// state (POST /drain); nil admits loopback callers only, and logs no
	// refusal. Its sparrow_http_refused_total is served at /metrics.
	Admin *AdminGuard
	// View, if set, is the daemon's gossip view: /status reports how many
	// daemons it holds (Status.ViewSize).
	View GossipView
	// Pprof serves net/http/pprof at /debug/pprof/. Off by default: a
	// profile exposes stacks and heap contents, and a CPU profile costs
	// the daemon time while it runs.
	Pprof bool
}

// Server is a running operator endpoint.
type Server struct {
	srv      *http.Server
	ln       net.Listener
	ready    Check
	status   func() Status
	view     GossipView
	stopping atomic.Bool
	drain    func()
	drainOne sync.Once
}

// processStart approximates when this process started: package
// initialisation runs before main.
var processStart = time.Now()

// Serve listens on cfg.Addr and serves until Close.
func Serve(cfg Config) (*Server, error) {
	reg := prometheus.NewRegistry()
	if err := reg.Register(collectors.NewGoCollector()); err != nil {
		return nil, err
	}
	if err := reg.Register(collectors.NewProcessCollector(collectors.ProcessCollectorOpts{})); err != nil {
		return nil, err
	}
	admin := cfg.Admin
	if admin == nil {
		// Without a token file the guard cannot fail.
		admin, _ = NewAdminGuard("", zerolog.Nop())
	}
	if err := reg.Register(admin); err != nil {
		return nil, fmt.Errorf("register metrics: %w", err)
	}
	for _, c := range cfg.Collectors {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("register metrics: %w", err)
		}
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		// The words "metrics listen" are kept from before the listener
		// grew: the interop tests match them to tell a port taken meanwhile
		// from other start-up failures.
		return nil, fmt.Errorf("metrics listen on %s (--http-listen): %w", cfg.Addr, err)
	}
	s := &Server{ln: ln, ready: cfg.Ready, status: cfg.Status, drain: cfg.Drain, view: cfg.View}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /livez", s.livez)
	mux.HandleFunc("GET /readyz", s.readyz)
	if cfg.Status != nil {
		mux.HandleFunc("GET /status", s.statusJSON)
	}
	if cfg.UI != nil {
		mux.Handle("/ui/", cfg.UI)
		mux.Handle("GET /{$}", http.RedirectHandler("/ui/", http.StatusFound))
	}
	if cfg.Drain != nil {
		mux.Handle("POST /drain", admin.Protect("/drain", s.startDrain))
	}
	if cfg.Pprof {
		// Registered on this mux only: importing net/http/pprof also
		// registers on http.DefaultServeMux, which nothing here serves.
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	// Serve returns only once Close shuts the server down.
	go s.srv.Serve(ln)
	return s, nil
}

// Addr returns the bound address.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// ShuttingDown makes /readyz fail from now on, while /livez still answers:
// a daemon calls it on SIGTERM, before it leaves the cluster, so that load
// balancers stop sending it work while it drains.
func (s *Server) ShuttingDown() { s.stopping.Store(true) }

// Close stops the server.
func (s *Server) Close() error {
	s.stopping.Store(true)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return s.srv.Shutdown(ctx)
}

// livez answers 200 for as long as the process serves HTTP: a liveness
// probe should restart a daemon only when it is wedged, never because a
// peer is missing (that is readiness).
func (s *Server) livez(w http.ResponseWriter, _ *http.Request) {
	writeLine(w, http.StatusOK, "ok")
}

// readyz answers 200 "ready", or 503 with the first reason the daemon is
// not ready, on one line so that probe logs show it whole.
func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	if reason := s.notReady(); reason != "" {
		writeLine(w, http.StatusServiceUnavailable, "not ready: "+reason)
		return
	}
	writeLine(w, http.StatusOK, "ready")
}

func (s *Server) notReady() string {
	if s.stopping.Load() {
		return "shutting down"
	}
	if s.ready == nil {
		return ""
	}
	return s.ready()
}

// startDrain fails /readyz and starts the daemon's drain, once; a repeated
// call is answered the same way.
func (s *Server) startDrain(w http.ResponseWriter, _ *http.Request) {
	s.stopping.Store(true)
	s.drainOne.Do(func() { go s.drain() })
	writeLine(w, http.StatusAccepted, "draining")
}

func (s *Server) statusJSON(w http.ResponseWriter, _ *http.Request) {
	st := s.status()
	if st.Version == "" {
		st.Version = buildinfo.Read().Short()
	}
	if s.view != nil {
		st.ViewSize = 0
		for _, m := range s.view.Members("") {
			if m.Meta.Role != membership.RoleObserver {
				st.ViewSize++
			}
		}
	}
	st.Reason = s.notReady()
	st.Ready = st.Reason == ""
	if st.Started == "" {
		st.Started = processStart.UTC().Format(time.RFC3339)
	}
	b, err := json.Marshal(st)
	if err != nil {
		writeLine(w, http.StatusInternalServerError, err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(append(b, '\n'))
}

func writeLine(w http.ResponseWriter, code int, line string) {
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	// Probes cache nothing; proxies must not either.
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	fmt.Fprintln(w, line)
}
