package k8snode

import (
	"context"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/rs/zerolog"
)

const nodeName = "worker-1"

// fakeAPI is the API server's side the watcher uses: GET of one Node and
// a watch on it. cordon changes the Node and tells every open watch;
// failNext makes the next requests fail with those status codes.
type fakeAPI struct {
	mu       sync.Mutex
	cordoned bool
	rv       int
	watches  map[chan []byte]bool
	failNext []int
	expire   bool // the next watch answers 410 Gone at once
	token    string
	requests []string // "GET path" or "WATCH rv"
}

func newFakeAPI() *fakeAPI { return &fakeAPI{rv: 1, watches: map[chan []byte]bool{}, token: "tok"} }

func (f *fakeAPI) nodeJSON() []byte {
	b, _ := json.Marshal(map[string]any{
		"kind": "Node", "apiVersion": "v1",
		"metadata": map[string]any{"name": nodeName, "resourceVersion": fmt.Sprint(f.rv)},
		"spec":     map[string]any{"unschedulable": f.cordoned},
	})
	return b
}

func (f *fakeAPI) cordon(c bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.cordoned = c
	f.rv++
	ev := fmt.Appendf(nil, `{"type":"MODIFIED","object":%s}`+"\n", f.nodeJSON())
	for ch := range f.watches {
		ch <- ev
	}
}

// fail makes the next requests answer these status codes.
func (f *fakeAPI) fail(codes ...int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failNext = append(f.failNext, codes...)
}

func (f *fakeAPI) log() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.requests)
}

func (f *fakeAPI) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	watch := r.URL.Query().Get("watch") == "1"
	if watch {
		f.requests = append(f.requests, "WATCH "+r.URL.Query().Get("resourceVersion"))
	} else {
		f.requests = append(f.requests, "GET "+r.URL.Path)
	}
	if r.Header.Get("Authorization") != "Bearer "+f.token {
		f.mu.Unlock()
		http.Error(w, `{"kind":"Status","message":"Unauthorized","code":401}`, http.StatusUnauthorized)
		return
	}
	if len(f.failNext) > 0 {
		code := f.failNext[0]
		f.failNext = f.failNext[1:]
		f.mu.Unlock()
		http.Error(w, fmt.Sprintf(`{"kind":"Status","message":"injected %d","code":%d}`, code, code), code)
		return
	}
	if !watch {
		defer f.mu.Unlock()
		if r.URL.Path != "/api/v1/nodes/"+nodeName {
			http.Error(w, `{"kind":"Status","message":"not found","code":404}`, http.StatusNotFound)
			return
		}
		w.Write(f.nodeJSON())
		return
	}
	if r.URL.Query().Get("fieldSelector") != "metadata.name="+nodeName {
		f.mu.Unlock()
		http.Error(w, "bad field selector", http.StatusBadRequest)
		return
	}
	if f.expire {
		f.expire = false
		f.mu.Unlock()
		w.Write([]byte(`{"type":"ERROR","object":{"kind":"Status","code":410,"reason":"Expired","message":"too old resource version"}}` + "\n"))
		return
	}
	ch := make(chan []byte, 8)
	f.watches[ch] = true
	f.mu.Unlock()
	defer func() {
		f.mu.Lock()
		delete(f.watches, ch)
		f.mu.Unlock()
	}()
	timeout, _ := time.ParseDuration(r.URL.Query().Get("timeoutSeconds") + "s")
	w.WriteHeader(http.StatusOK)
	w.(http.Flusher).Flush()
	end := time.After(timeout)
	for {
		select {
		case ev, open := <-ch:
			if !open {
				return // dropped, as by a restarting API server
			}
			w.Write(ev)
			w.(http.Flusher).Flush()
		case <-end:
			return
		case <-r.Context().Done():
			return
		}
	}
}

// pipeListener serves connections made by dial over in-memory pipes, so
// that the fake API runs inside a synctest bubble.
type pipeListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newPipeListener() *pipeListener {
	return &pipeListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *pipeListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *pipeListener) Close() error   { l.once.Do(func() { close(l.done) }); return nil }
func (l *pipeListener) Addr() net.Addr { return pipeAddr{} }

func (l *pipeListener) dial(ctx context.Context, _, _ string) (net.Conn, error) {
	client, server := net.Pipe()
	select {
	case l.conns <- server:
		return client, nil
	case <-l.done:
		return nil, net.ErrClosed
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

type pipeAddr struct{}

func (pipeAddr) Network() string { return "pipe" }
func (pipeAddr) String() string  { return "fake-apiserver:443" }

// rig runs the fake API and a watcher of it in the calling bubble, and
// records what the watcher reports.
type rig struct {
	api     *fakeAPI
	mu      sync.Mutex
	reports []bool
}

func (r *rig) got() []bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.reports)
}

func startRig(t *testing.T, api *fakeAPI) *rig {
	l := newPipeListener()
	srv := httptest.NewUnstartedServer(api)
	srv.Listener = l
	srv.Start()
	tr := &http.Transport{DialContext: l.dial}
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "token")
	if err := os.WriteFile(tokenFile, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := &rig{api: api}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Watch(ctx, Config{
			Node: nodeName, API: srv.URL, TokenFile: tokenFile, Client: &http.Client{Transport: tr},
			MinBackoff: time.Second, MaxBackoff: 8 * time.Second, WatchTimeout: time.Minute, Log: zerolog.Nop(),
		}, func(c bool) {
			r.mu.Lock()
			defer r.mu.Unlock()
			r.reports = append(r.reports, c)
		})
	}()
	t.Cleanup(func() {
		cancel()
		<-done
		tr.CloseIdleConnections()
		srv.Close()
	})
	synctest.Wait()
	return r
}

func TestWatch(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, r *rig)
	}{
		{"reports the state read, then each change", func(t *testing.T, r *rig) {
			want(t, r.got(), false)
			r.api.cordon(true)
			synctest.Wait()
			r.api.cordon(true) // a change elsewhere in the Node: no news
			synctest.Wait()
			r.api.cordon(false)
			synctest.Wait()
			want(t, r.got(), false, true, false)
			if log := r.api.log(); !slices.Equal(log, []string{"GET /api/v1/nodes/" + nodeName, "WATCH 1"}) {
				t.Errorf("requests %v, want one GET and one watch from its version", log)
			}
		}},
		{"a watch the server ends is followed by a fresh read", func(t *testing.T, r *rig) {
			time.Sleep(time.Minute + time.Millisecond)
			synctest.Wait()
			r.api.cordon(true)
			synctest.Wait()
			want(t, r.got(), false, true)
			if n := len(r.api.log()); n != 4 {
				t.Errorf("requests %v, want GET and watch twice", r.api.log())
			}
		}},
		{"an expired watch reads the Node afresh at once", func(t *testing.T, r *rig) {
			r.api.mu.Lock()
			r.api.expire = true
			r.api.mu.Unlock()
			// End the open watch: the next one answers 410.
			time.Sleep(time.Minute + time.Millisecond)
			synctest.Wait()
			before := time.Now()
			r.api.cordon(true)
			synctest.Wait()
			want(t, r.got(), false, true)
			if time.Since(before) != 0 {
				t.Errorf("took %v of fake time", time.Since(before))
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				tt.run(t, startRig(t, newFakeAPI()))
			})
		})
	}
}

// API errors leave the last state standing and are retried with a
// doubling backoff, up to the maximum; a success resets it.
func TestWatchRetriesWithBackoff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.cordoned = true
		api.fail(http.StatusInternalServerError, http.StatusForbidden, http.StatusServiceUnavailable, 500, 500)
		start := time.Now()
		r := startRig(t, api)
		var at []time.Duration
		for len(r.got()) == 0 {
			at = append(at, time.Since(start))
			time.Sleep(time.Second / 2)
			synctest.Wait()
			if time.Since(start) > time.Minute {
				t.Fatal("no state reported within a minute")
			}
		}
		// Failures at 0, 1, 3, 7 and 15 s (backoffs 1, 2, 4, 8, 8): the
		// sixth request, at 23 s, succeeds.
		if got := time.Since(start).Truncate(time.Second); got != 23*time.Second {
			t.Errorf("state first read after %v, want 23s", got)
		}
		want(t, r.got(), true)
		// The API fails again: the state stands, the watcher retries.
		api.fail(500, 500)
		r.api.mu.Lock()
		for ch := range r.api.watches {
			close(ch) // drop the watch as a restarting API server would
			delete(r.api.watches, ch)
		}
		r.api.mu.Unlock()
		synctest.Wait()
		want(t, r.got(), true)
		// The watch lasted under a second: 1 s before the next read, which
		// fails, as does the one 1 s later; the one 2 s after that, 4 s
		// after the drop, reads the Node and watches it.
		time.Sleep(4*time.Second - time.Millisecond)
		synctest.Wait()
		if n := len(r.api.log()); n != 9 {
			t.Errorf("%d requests 4 s after the drop, want 9: %v", n, r.api.log())
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if log := r.api.log(); len(log) != 11 || log[10] != "WATCH 1" {
			t.Errorf("requests %v, want a read and a watch 4 s after the drop", log)
		}
		api.cordon(false)
		synctest.Wait()
		want(t, r.got(), true, false)
	})
}

func want(t *testing.T, got []bool, w ...bool) {
	t.Helper()
	if !slices.Equal(got, w) {
		t.Fatalf("reported %v, want %v", got, w)
	}
}

// A wrong token is an error like any other: retried, logged, nothing
// reported.
func TestWatchUnauthorized(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		api := newFakeAPI()
		api.token = "other"
		r := startRig(t, api)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got := r.got(); len(got) != 0 {
			t.Errorf("reported %v with a refused token", got)
		}
		if n := len(api.log()); n < 3 {
			t.Errorf("%d requests in 10 s, want retries", n)
		}
	})
}

// InCluster reaches the API server over TLS with the pod's CA and token,
// as a pod does.
func TestInCluster(t *testing.T) {
	api := newFakeAPI()
	srv := httptest.NewTLSServer(api)
	defer srv.Close()
	dir := t.TempDir()
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	os.WriteFile(filepath.Join(dir, "ca.crt"), ca, 0o600)
	os.WriteFile(filepath.Join(dir, "token"), []byte("tok"), 0o600)
	host, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "https://"))
	cfg, err := inCluster(nodeName, host, port, dir, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	cfg.WatchTimeout = time.Second
	got := make(chan bool, 4)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { defer close(done); Watch(ctx, cfg, func(c bool) { got <- c }) }()
	select {
	case c := <-got:
		if c {
			t.Error("reported cordoned, want not")
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no state reported over TLS within 30 s")
	}
	cancel()
	<-done

	for _, tc := range []struct {
		name, host, port, dir, want string
	}{
		{"no node", host, port, dir, "no Node name"},
		{"outside a pod", "", "", dir, "KUBERNETES_SERVICE_HOST"},
		{"no CA", host, port, t.TempDir(), "the cluster CA"},
	} {
		node := nodeName
		if tc.name == "no node" {
			node = ""
		}
		if _, err := inCluster(node, tc.host, tc.port, tc.dir, zerolog.Nop()); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming %q", tc.name, err, tc.want)
		}
	}
}

func TestReadEvents(t *testing.T) {
	node := func(cordoned bool) string {
		return fmt.Sprintf(`{"metadata":{"name":"n","resourceVersion":"7"},"spec":{"unschedulable":%v}}`, cordoned)
	}
	for _, tc := range []struct {
		name, stream string
		want         []string
		err          string
	}{
		{"events", `{"type":"ADDED","object":` + node(false) + `}{"type":"BOOKMARK","object":{}}` + "\n" + `{"type":"MODIFIED","object":` + node(true) + `}`,
			[]string{"ADDED false", "BOOKMARK", "MODIFIED true"}, ""},
		{"empty", ``, nil, ""},
		{"expired", `{"type":"ERROR","object":{"code":410,"reason":"Expired"}}`, nil, errExpired.Error()},
		{"forbidden", `{"type":"ERROR","object":{"code":403,"reason":"Forbidden","message":"no"}}`, nil, "watch error 403 Forbidden: no"},
		{"unknown type", `{"type":"WHAT","object":{}}`, nil, `unknown type "WHAT"`},
		{"not a node", `{"type":"MODIFIED","object":{"spec":{}}}`, nil, "no metadata.name"},
		{"cut off", `{"type":"MODIFIED","obj`, nil, "watch stream"},
	} {
		var got []string
		err := readEvents(strings.NewReader(tc.stream), func(ev event) error {
			s := ev.kind
			if ev.node != nil {
				s += fmt.Sprintf(" %v", ev.node.Spec.Unschedulable)
			}
			got = append(got, s)
			return nil
		})
		if !slices.Equal(got, tc.want) || (err == nil) != (tc.err == "") || err != nil && !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s: events %v, error %v; want %v, error %q", tc.name, got, err, tc.want, tc.err)
		}
	}
}

func FuzzReadEvents(f *testing.F) {
	f.Add([]byte(`{"type":"MODIFIED","object":{"metadata":{"name":"n"},"spec":{"unschedulable":true}}}`))
	f.Add([]byte(`{"type":"ERROR","object":{"code":410}}`))
	f.Add([]byte(`{"type":"BOOKMARK"}{"type":"DELETED","object":null}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = readEvents(strings.NewReader(string(b)), func(ev event) error {
			if (ev.kind == "ADDED" || ev.kind == "MODIFIED") != (ev.node != nil) {
				t.Fatalf("event %q with node %v", ev.kind, ev.node)
			}
			if ev.node != nil && ev.node.Metadata.Name == "" {
				t.Fatal("a node without a name passed")
			}
			return nil
		})
	})
}
