package integration

import (
	"context"
	"crypto/tls"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"

	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/core/queue"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/rpc"
	"github.com/sparrowfleet/sparrow/nodemonitor"
	"github.com/sparrowfleet/sparrow/scheduler"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// Loopback addresses of the secured fleet's members.
const (
	secSchedHost    = "127.0.5.1"
	secNMHost       = "127.0.5.2"
	secFrontendHost = "127.0.5.3"
	secExecHost     = "127.0.5.4"
	secFriendHost   = "127.0.5.5"
	secKeylessHost  = "127.0.5.6"
	secWrongKeyHost = "127.0.5.7"
	secPlainHost    = "127.0.5.8"
)

// secPKI is a cluster CA and a foreign one, written to a temporary
// directory as "sparrow certs" would.
type secPKI struct {
	dir                     string
	caCert, caKey           []byte
	otherCACert, otherCAKey []byte
}

func newSecPKI(t *testing.T) *secPKI {
	t.Helper()
	p := &secPKI{dir: t.TempDir()}
	var err error
	if p.caCert, p.caKey, err = rpc.GenerateCA(rpc.CertOptions{Name: "test cluster CA"}); err != nil {
		t.Fatal(err)
	}
	if p.otherCACert, p.otherCAKey, err = rpc.GenerateCA(rpc.CertOptions{Name: "rogue CA"}); err != nil {
		t.Fatal(err)
	}
	p.write(t, "ca.crt", p.caCert)
	return p
}

func (p *secPKI) write(t *testing.T, name string, data []byte) string {
	t.Helper()
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// issue makes a certificate from the cluster CA (or the rogue one) and
// returns its TLS config for both serving and calling, with client
// certificates required.
func (p *secPKI) issue(t *testing.T, name string, rogue bool, hosts ...string) *tls.Config {
	t.Helper()
	caCert, caKey := p.caCert, p.caKey
	if rogue {
		caCert, caKey = p.otherCACert, p.otherCAKey
	}
	cert, key, err := rpc.IssueCert(caCert, caKey, rpc.CertOptions{Name: name, Hosts: hosts})
	if err != nil {
		t.Fatal(err)
	}
	files := rpc.TLSFiles{
		CA: filepath.Join(p.dir, "ca.crt"), Cert: p.write(t, name+".crt", cert), Key: p.write(t, name+".key", key),
		RequireClientCert: true,
	}
	var cfg *tls.Config
	if rogue {
		// Its own certificate chains to the rogue CA, so only a client
		// config can be made; it still trusts the cluster CA for servers.
		// Go's client would offer no certificate to a server that names
		// another CA, so force it out, as another implementation might.
		if cfg, err = files.ClientConfig(); err == nil {
			cert := cfg.Certificates[0]
			cfg.Certificates = nil
			cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
		}
	} else {
		cfg, err = files.Config()
	}
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

func newGossipKeyring(t *testing.T) *memberlist.Keyring {
	t.Helper()
	s, err := membership.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	kr, err := membership.KeyringFromEnv(s)
	if err != nil {
		t.Fatal(err)
	}
	return kr
}

// secureFleet is one scheduler and one node monitor with mutual TLS and
// gossip encryption.
type secureFleet struct {
	pki     *secPKI
	keyring *memberlist.Keyring
	sched   *scheduler.Daemon
	nm      *nodemonitor.Daemon
}

func startSecureFleet(t *testing.T) *secureFleet {
	t.Helper()
	if testing.Short() {
		t.Skip("integration test; skipped with -short")
	}
	f := &secureFleet{pki: newSecPKI(t), keyring: newGossipKeyring(t)}
	log := testLogger(t)
	var err error
	f.sched, err = scheduler.StartDaemon(scheduler.DaemonConfig{
		Listen: secSchedHost + ":0", GetTaskListen: secSchedHost + ":0", Gossip: secSchedHost + ":0",
		GossipProfile: "local", Keyring: f.keyring, Name: "scheduler",
		RPC: rpc.Config{TLS: f.pki.issue(t, "scheduler", false, secSchedHost)}, Log: log,
	})
	if err != nil {
		t.Fatalf("start scheduler: %v", err)
	}
	t.Cleanup(func() { f.sched.Close() })
	q, err := queue.New("fifo", 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.nm, err = nodemonitor.StartDaemon(nodemonitor.DaemonConfig{
		Listen: secNMHost + ":0", InternalListen: secNMHost + ":0", Gossip: secNMHost + ":0",
		Join: []string{f.sched.Cluster.Addr()}, GossipProfile: "local", Keyring: f.keyring, Name: "nodemonitor",
		Slots: 2, Queue: q,
		RPC: rpc.Config{TLS: f.pki.issue(t, "nodemonitor", false, secNMHost)}, Log: log,
	})
	if err != nil {
		t.Fatalf("start node monitor: %v", err)
	}
	t.Cleanup(func() { f.nm.Close() })
	waitFor(t, "the scheduler to see the node monitor over encrypted gossip", 20*time.Second, func() bool {
		return len(f.sched.Cluster.Members(membership.RoleNodeMonitor)) == 1
	})
	return f
}

// ping submits an empty job, the protocol's liveness check, with cfg.
func ping(addr string, cfg *tls.Config) error {
	p := rpc.NewPool(rpc.Config{TLS: cfg, ConnectTimeout: 5 * time.Second, CallTimeout: 5 * time.Second},
		sparrowrpc.NewSchedulerServiceClient)
	defer p.Close()
	return p.Call(context.Background(), addr, func(ctx context.Context, c *sparrowrpc.SchedulerServiceClient) error {
		return c.SubmitJob(ctx, &sparrowrpc.TSchedulingRequest{App: "app", Tasks: []*sparrowrpc.TTaskSpec{}})
	})
}

// TestSecurityMutualTLS checks that a secured fleet serves callers with a
// certificate from its CA, on every path a job takes, and refuses
// plaintext callers, callers without a certificate, and callers with a
// certificate from another CA, on each of its four Thrift services.
func TestSecurityMutualTLS(t *testing.T) {
	f := startSecureFleet(t)
	sched := f.sched.ServiceAddr()

	good := f.pki.issue(t, "client", false)
	if err := ping(sched, good); err != nil {
		t.Fatalf("submitJob with a valid client certificate: %v", err)
	}

	noCert, err := rpc.TLSFiles{CA: filepath.Join(f.pki.dir, "ca.crt")}.ClientConfig()
	if err != nil {
		t.Fatal(err)
	}
	rogue := f.pki.issue(t, "rogue", true)
	bad := []struct {
		name string
		cfg  *tls.Config
	}{{"plaintext", nil}, {"no certificate", noCert}, {"rogue CA certificate", rogue}}
	services := map[string]string{
		"SchedulerService":   sched,
		"GetTaskService":     f.sched.GetTaskAddr(),
		"NodeMonitorService": f.nm.ServiceAddr(),
		"InternalService":    f.nm.InternalAddr(),
	}
	for svc, addr := range services {
		for _, b := range bad {
			// Any call fails in the handshake, before a service sees it.
			if err := ping(addr, b.cfg); err == nil {
				t.Errorf("%s at %s served a %s caller", svc, addr, b.name)
			} else {
				t.Logf("%s, %s caller: %v", svc, b.name, err)
			}
		}
	}

	// A whole job over mutual TLS: frontend -> scheduler -> node monitor
	// -> scheduler (getTask) -> executor -> node monitor -> scheduler ->
	// frontend, every hop verifying the other side's certificate.
	ctx := context.Background()
	be, err := client.NewBackend(ctx, client.BackendConfig{
		App: "app", NodeMonitor: f.nm.ServiceAddr(), Listen: secExecHost + ":0", AdvertiseHost: secExecHost,
		Run: echoTask(time.Millisecond), RPC: client.RPCConfig{TLS: f.pki.issue(t, "executor", false, secExecHost)},
		Log: testLogger(t),
	})
	if err != nil {
		t.Fatalf("executor with TLS: %v", err)
	}
	t.Cleanup(func() { be.Close() })
	waitFor(t, "the scheduler to see the app through encrypted gossip", 20*time.Second, func() bool {
		nms := f.sched.Cluster.Members(membership.RoleNodeMonitor)
		return len(nms) == 1 && nms[0].Meta.HostsApp("app")
	})
	led := newLedger()
	fe, err := client.NewFrontend(ctx, client.FrontendConfig{
		App: "app", Schedulers: []string{sched},
		Listen: secFrontendHost + ":0", AdvertiseHost: secFrontendHost,
		OnMessage: led.message, Timeout: 5 * time.Second,
		RPC: client.RPCConfig{TLS: f.pki.issue(t, "frontend", false, secFrontendHost)}, Log: testLogger(t),
	})
	if err != nil {
		t.Fatalf("frontend with TLS: %v", err)
	}
	t.Cleanup(func() { fe.Close() })
	const tasks = 6
	if _, err := fe.Submit(ctx, newJob("secure-job", tasks)); err != nil {
		t.Fatalf("submit over mutual TLS: %v", err)
	}
	waitFor(t, "every task's message over mutual TLS", 30*time.Second, func() bool {
		_, m := led.counts()
		return m == tasks
	})
}

// viewLog records every member the watched cluster ever reports.
type viewLog struct {
	mu    sync.Mutex
	names []string
}

func (v *viewLog) watch(e membership.Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.names = append(v.names, e.Member.Name)
}

func (v *viewLog) saw(name string) bool {
	v.mu.Lock()
	defer v.mu.Unlock()
	return slices.Contains(v.names, name)
}

// outsider starts a raw memberlist member with keyring kr (nil: none).
func outsider(t *testing.T, name, host string, kr *memberlist.Keyring) *memberlist.Memberlist {
	t.Helper()
	mc := memberlist.DefaultLocalConfig()
	mc.Name, mc.BindAddr, mc.BindPort = name, host, 0
	mc.LogOutput = io.Discard
	if kr != nil {
		mc.Keyring, mc.GossipVerifyIncoming, mc.GossipVerifyOutgoing = kr, true, true
	}
	ml, err := memberlist.Create(mc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ml.Shutdown() })
	return ml
}

// TestSecurityGossipEncryption checks that members without the cluster's
// gossip key, or with a different key, cannot join: their join fails and
// the cluster's view never shows them, while a member with the key joins.
func TestSecurityGossipEncryption(t *testing.T) {
	f := startSecureFleet(t)
	seed := f.sched.Cluster.Addr()
	var views [2]viewLog
	f.sched.Cluster.Watch(views[0].watch)
	f.nm.Cluster.Watch(views[1].watch)

	wrongKeyring := newGossipKeyring(t)
	keyless := outsider(t, "keyless", secKeylessHost, nil)
	if _, err := keyless.Join([]string{seed}); err == nil {
		t.Error("a member without a gossip key joined the encrypted cluster")
	} else {
		t.Logf("keyless join: %v", err)
	}
	wrong := outsider(t, "wrong-key", secWrongKeyHost, wrongKeyring)
	if _, err := wrong.Join([]string{seed}); err == nil {
		t.Error("a member with the wrong gossip key joined the encrypted cluster")
	} else {
		t.Logf("wrong-key join: %v", err)
	}
	// A plaintext sparrow member keeps retrying its seed in the background.
	plain, err := membership.Start(membership.Config{
		Name: "plaintext", Bind: secPlainHost + ":0", Seeds: []string{seed}, Profile: "local",
		Meta: membership.Meta{Role: membership.RoleNodeMonitor}, Log: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { plain.Leave(0) })

	// Positive control: a member with the key (as a secondary key, as
	// during a rotation) joins and both daemons see it.
	friendRing, err := membership.NewKeyring([][]byte{f.keyring.GetPrimaryKey(), wrongKeyring.GetPrimaryKey()})
	if err != nil {
		t.Fatal(err)
	}
	friendRing.UseKey(f.keyring.GetPrimaryKey())
	friend, err := membership.Start(membership.Config{
		Name: "friend", Bind: secFriendHost + ":0", Seeds: []string{seed}, Profile: "local", Keyring: friendRing,
		Meta: membership.Meta{Role: membership.RoleNodeMonitor}, Log: testLogger(t),
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { friend.Leave(0) })
	waitFor(t, "the member with the key to join", 20*time.Second, func() bool {
		return views[0].saw("friend") && views[1].saw("friend")
	})
	// Give the refused members more gossip rounds and join retries
	// (push/pull every second, join retries every second) to get in.
	time.Sleep(2500 * time.Millisecond)

	for i, c := range []*membership.Cluster{f.sched.Cluster, f.nm.Cluster} {
		for _, name := range []string{"keyless", "wrong-key", "plaintext"} {
			if views[i].saw(name) {
				t.Errorf("%s's view showed %s", c.Name(), name)
			}
		}
		var names []string
		for _, m := range c.Members("") {
			names = append(names, m.Name)
		}
		slices.Sort(names)
		if want := []string{"friend", "nodemonitor", "scheduler"}; !slices.Equal(names, want) {
			t.Errorf("%s sees %v, want %v", c.Name(), names, want)
		}
	}
	for _, ml := range []*memberlist.Memberlist{keyless, wrong} {
		if n := ml.NumMembers(); n != 1 {
			t.Errorf("%s sees %d members, want only itself", ml.LocalNode().Name, n)
		}
	}
	if got := plain.Members(""); len(got) != 1 || got[0].Name != "plaintext" {
		t.Errorf("plaintext member sees %v, want only itself", got)
	}
}
