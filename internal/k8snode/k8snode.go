// Package k8snode watches the Kubernetes Node a daemon runs on, through
// the API server's REST interface (plain net/http and encoding/json, with
// the pod's service account), and reports whether the Node is cordoned
// (spec.unschedulable), so that a node monitor stops taking work while
// its machine is being taken out of service (kubectl cordon, kubectl
// drain) and takes work again once it is uncordoned.
//
// The service account needs get and watch on nodes.
package k8snode

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rs/zerolog"
)

// ServiceAccountDir is where Kubernetes mounts a pod's service account
// token and the cluster's CA.
const ServiceAccountDir = "/var/run/secrets/kubernetes.io/serviceaccount"

// Defaults of Config's timing.
const (
	DefaultMinBackoff   = time.Second
	DefaultMaxBackoff   = time.Minute
	DefaultWatchTimeout = 5 * time.Minute
)

// Config says which Node to watch and how to reach the API server.
type Config struct {
	// Node is the Node's name (spec.nodeName, through the downward API).
	Node string
	// API is the API server's base URL, e.g. "https://10.96.0.1:443".
	API string
	// TokenFile holds the bearer token; it is read for every request, as
	// the kubelet rotates it. Empty: no Authorization header.
	TokenFile string
	// Client makes the calls; it must trust the API server's certificate.
	Client *http.Client
	// MinBackoff and MaxBackoff bound the wait after a failed call: it
	// starts at MinBackoff and doubles up to MaxBackoff.
	MinBackoff, MaxBackoff time.Duration
	// WatchTimeout is how long the API server holds a watch open before
	// the watcher reads the Node afresh and watches again.
	WatchTimeout time.Duration
	Log          zerolog.Logger
}

// InCluster returns the Config of a pod watching node: the API server from
// KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT, the token and CA
// from ServiceAccountDir.
func InCluster(node string, log zerolog.Logger) (Config, error) {
	return inCluster(node, os.Getenv("KUBERNETES_SERVICE_HOST"), os.Getenv("KUBERNETES_SERVICE_PORT"), ServiceAccountDir, log)
}

func inCluster(node, host, port, saDir string, log zerolog.Logger) (Config, error) {
	if node == "" {
		return Config{}, errors.New("k8s node: no Node name given")
	}
	if host == "" || port == "" {
		return Config{}, errors.New("k8s node: not in a Kubernetes pod: KUBERNETES_SERVICE_HOST or KUBERNETES_SERVICE_PORT is unset")
	}
	caPEM, err := os.ReadFile(filepath.Join(saDir, "ca.crt"))
	if err != nil {
		return Config{}, fmt.Errorf("k8s node: the cluster CA: %w (is the service account token mounted?)", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(caPEM) {
		return Config{}, fmt.Errorf("k8s node: %s holds no PEM certificate", filepath.Join(saDir, "ca.crt"))
	}
	token := filepath.Join(saDir, "token")
	if _, err := os.Stat(token); err != nil {
		return Config{}, fmt.Errorf("k8s node: the service account token: %w", err)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return Config{
		Node: node, API: "https://" + net.JoinHostPort(host, port), TokenFile: token,
		Client: &http.Client{Transport: tr}, Log: log,
	}, nil
}

// Watch reports the Node's cordon state to onChange, once when it is
// first read and then on every change, until ctx ends. A failed call is
// logged and retried after a backoff; the state last reported stands
// meanwhile. onChange is called from Watch's goroutine, one call at a
// time.
func Watch(ctx context.Context, cfg Config, onChange func(cordoned bool)) {
	if cfg.MinBackoff <= 0 {
		cfg.MinBackoff = DefaultMinBackoff
	}
	if cfg.MaxBackoff < cfg.MinBackoff {
		cfg.MaxBackoff = max(DefaultMaxBackoff, cfg.MinBackoff)
	}
	if cfg.WatchTimeout <= 0 {
		cfg.WatchTimeout = DefaultWatchTimeout
	}
	w := &watcher{cfg: cfg, onChange: onChange, log: cfg.Log.With().Str("component", "k8snode").Str("k8s_node", cfg.Node).Logger()}
	backoff := cfg.MinBackoff
	expiredBefore := false
	for ctx.Err() == nil {
		start := time.Now()
		err := w.cycle(ctx)
		if ctx.Err() != nil {
			return
		}
		expired := errors.Is(err, errExpired)
		wait := time.Duration(0)
		switch {
		case expired && !expiredBefore:
			// The version read is already too old: read again at once.
		case err != nil && !expired:
			wait = backoff
			backoff = min(2*backoff, cfg.MaxBackoff)
			w.log.Warn().Err(err).Dur("retry_in", wait).Bool("cordoned", w.cordoned).Msg("cannot watch the Kubernetes Node; keeping its last known state")
		default:
			backoff = cfg.MinBackoff
			if time.Since(start) < cfg.MinBackoff {
				// A watch the API server ended at once: do not spin.
				wait = cfg.MinBackoff
			}
		}
		expiredBefore = expired
		if wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
	}
}

type watcher struct {
	cfg      Config
	onChange func(bool)
	log      zerolog.Logger
	known    bool
	cordoned bool
}

// set reports cordoned if it is news.
func (w *watcher) set(cordoned bool) {
	if w.known && cordoned == w.cordoned {
		return
	}
	w.known, w.cordoned = true, cordoned
	w.log.Info().Bool("cordoned", cordoned).Msg("Kubernetes Node state")
	w.onChange(cordoned)
}

// cycle reads the Node, then watches it from the version read until the
// watch ends: without error when the server ends it, with errExpired
// when the version read is too old to watch from.
func (w *watcher) cycle(ctx context.Context) error {
	body, err := w.get(ctx, "/api/v1/nodes/"+url.PathEscape(w.cfg.Node), w.cfg.WatchTimeout)
	if err != nil {
		return err
	}
	n, err := decodeNode(body)
	body.Close()
	if err != nil {
		return fmt.Errorf("read Node %s: %w", w.cfg.Node, err)
	}
	w.set(n.Spec.Unschedulable)
	q := url.Values{
		"watch":           {"1"},
		"fieldSelector":   {"metadata.name=" + w.cfg.Node},
		"resourceVersion": {n.Metadata.ResourceVersion},
		"timeoutSeconds":  {strconv.Itoa(int(w.cfg.WatchTimeout / time.Second))},
	}
	// The client gives up a little after the server's timeout, so that a
	// connection lost without a word does not hold the watch forever.
	body, err = w.get(ctx, "/api/v1/nodes?"+q.Encode(), w.cfg.WatchTimeout+30*time.Second)
	if err != nil {
		return err
	}
	defer body.Close()
	err = readEvents(body, func(ev event) error {
		if ev.node != nil && ev.node.Metadata.Name == w.cfg.Node {
			w.set(ev.node.Spec.Unschedulable)
		}
		return nil
	})
	return err
}

// get calls GET path and returns the body of a 200 answer, valid until
// timeout passes or ctx ends; the caller closes it.
func (w *watcher) get(ctx context.Context, path string, timeout time.Duration) (io.ReadCloser, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(w.cfg.API, "/")+path, nil)
	if err != nil {
		cancel()
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	if w.cfg.TokenFile != "" {
		tok, err := os.ReadFile(w.cfg.TokenFile)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("service account token: %w", err)
		}
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(string(tok)))
	}
	resp, err := w.cfg.Client.Do(req)
	if err != nil {
		cancel()
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer cancel()
		defer resp.Body.Close()
		msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
		return nil, fmt.Errorf("GET %s: %s: %s", req.URL.Path, resp.Status, statusMessage(msg))
	}
	return cancelOnClose{resp.Body, cancel}, nil
}

type cancelOnClose struct {
	io.ReadCloser
	cancel context.CancelFunc
}

func (c cancelOnClose) Close() error {
	err := c.ReadCloser.Close()
	c.cancel()
	return err
}

// statusMessage is the message of an API server's Status answer, or the
// answer itself when it is not one.
func statusMessage(body []byte) string {
	var st status
	if json.Unmarshal(body, &st) == nil && st.Message != "" {
		return st.Message
	}
	return strings.TrimSpace(string(body))
}

// node is the part of a Node object the watcher reads.
type node struct {
	Metadata struct {
		Name            string `json:"name"`
		ResourceVersion string `json:"resourceVersion"`
	} `json:"metadata"`
	Spec struct {
		Unschedulable bool `json:"unschedulable"`
	} `json:"spec"`
}

// status is the part of a Status object (an API error) the watcher reads.
type status struct {
	Kind    string `json:"kind"`
	Message string `json:"message"`
	Reason  string `json:"reason"`
	Code    int    `json:"code"`
}

func decodeNode(r io.Reader) (*node, error) {
	var n node
	if err := json.NewDecoder(r).Decode(&n); err != nil {
		return nil, err
	}
	if n.Metadata.Name == "" {
		return nil, errors.New("not a Node: no metadata.name")
	}
	return &n, nil
}

// event is one watch event: the Node after an ADDED or MODIFIED event,
// nil for others (BOOKMARK, DELETED).
type event struct {
	kind string
	node *node
}

// errExpired ends a watch whose resource version is too old (410 Gone).
var errExpired = errors.New("watch: resource version expired")

// readEvents decodes a watch stream, passing each event to fn, until the
// stream ends (nil), fn fails, an ERROR event arrives, or an event is
// malformed.
func readEvents(r io.Reader, fn func(event) error) error {
	dec := json.NewDecoder(r)
	for {
		var raw struct {
			Type   string          `json:"type"`
			Object json.RawMessage `json:"object"`
		}
		if err := dec.Decode(&raw); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return fmt.Errorf("watch stream: %w", err)
		}
		ev := event{kind: raw.Type}
		switch raw.Type {
		case "ADDED", "MODIFIED":
			n, err := decodeNode(strings.NewReader(string(raw.Object)))
			if err != nil {
				return fmt.Errorf("watch event %s: %w", raw.Type, err)
			}
			ev.node = n
		case "DELETED", "BOOKMARK":
		case "ERROR":
			var st status
			_ = json.Unmarshal(raw.Object, &st)
			if st.Code == http.StatusGone {
				return errExpired
			}
			return fmt.Errorf("watch error %d %s: %s", st.Code, st.Reason, st.Message)
		default:
			return fmt.Errorf("watch event of unknown type %q", raw.Type)
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}
