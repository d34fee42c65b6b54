package rpc

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// tlsCA is a test CA written to a directory.
type tlsCA struct {
	dir             string
	certPEM, keyPEM []byte
}

func newTLSCA(t *testing.T, opts CertOptions) *tlsCA {
	t.Helper()
	certPEM, keyPEM, err := GenerateCA(opts)
	if err != nil {
		t.Fatal(err)
	}
	ca := &tlsCA{dir: t.TempDir(), certPEM: certPEM, keyPEM: keyPEM}
	writeTestFile(t, filepath.Join(ca.dir, "ca.crt"), certPEM)
	return ca
}

// issue writes a certificate for name and returns the files naming it with
// this CA.
func (ca *tlsCA) issue(t *testing.T, opts CertOptions) TLSFiles {
	t.Helper()
	certPEM, keyPEM, err := IssueCert(ca.certPEM, ca.keyPEM, opts)
	if err != nil {
		t.Fatal(err)
	}
	f := TLSFiles{
		CA:   filepath.Join(ca.dir, "ca.crt"),
		Cert: filepath.Join(ca.dir, opts.Name+".crt"),
		Key:  filepath.Join(ca.dir, opts.Name+".key"),
	}
	writeTestFile(t, f.Cert, certPEM)
	writeTestFile(t, f.Key, keyPEM)
	return f
}

func writeTestFile(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// mustTLS(t)(files.Config()) fails the test unless a config was made.
func mustTLS(t *testing.T) func(*tls.Config, error) *tls.Config {
	return func(cfg *tls.Config, err error) *tls.Config {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		if cfg == nil {
			t.Fatal("nil TLS config")
		}
		return cfg
	}
}

// tlsCounter is a FrontendService that counts the calls it serves.
type tlsCounter struct {
	originalFrontend
	calls atomic.Int64
}

func (c *tlsCounter) FrontendMessage(context.Context, *sparrowrpc.TFullTaskId, int32, []byte) error {
	c.calls.Add(1)
	return nil
}

// startTLSServer serves a counting FrontendService with cfg on 127.0.0.1.
func startTLSServer(t *testing.T, cfg *tls.Config) (string, *tlsCounter) {
	t.Helper()
	s, err := Listen("127.0.0.1:0", Config{TLS: cfg}, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	c := &tlsCounter{}
	done := make(chan error, 1)
	go func() { done <- s.Serve(sparrowrpc.NewFrontendServiceProcessor(c)) }()
	t.Cleanup(func() {
		s.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Serve: %v", err)
			}
		case <-time.After(10 * time.Second):
			t.Error("Serve did not return after Close")
		}
	})
	return s.Addr(), c
}

// tlsCall makes one FrontendMessage call to addr with a fresh pool.
func tlsCall(t *testing.T, addr string, cfg *tls.Config) error {
	t.Helper()
	p := NewPool(Config{TLS: cfg, CallTimeout: 5 * time.Second}, sparrowrpc.NewFrontendServiceClient)
	defer p.Close()
	return p.Call(context.Background(), addr, func(ctx context.Context, c *sparrowrpc.FrontendServiceClient) error {
		return c.FrontendMessage(ctx, &sparrowrpc.TFullTaskId{TaskId: "t", RequestId: "r"}, 0, []byte("m"))
	})
}

// tlsFixture is a cluster CA with a server, a client, and a foreign CA's
// client.
type tlsFixture struct {
	ca, other          *tlsCA
	server, client     TLSFiles
	foreign, foreignSv TLSFiles
}

func newTLSFixture(t *testing.T) *tlsFixture {
	f := &tlsFixture{
		ca:    newTLSCA(t, CertOptions{Name: "cluster CA"}),
		other: newTLSCA(t, CertOptions{Name: "other CA"}),
	}
	f.server = f.ca.issue(t, CertOptions{Name: "server", Hosts: []string{"127.0.0.1", "localhost"}})
	f.client = f.ca.issue(t, CertOptions{Name: "client", KeyType: KeyEd25519})
	f.foreign = f.other.issue(t, CertOptions{Name: "foreign", Hosts: []string{"127.0.0.1"}})
	// The foreign client trusts the cluster CA, so only its own
	// certificate is wrong.
	f.foreign.CA = f.server.CA
	f.foreignSv = f.other.issue(t, CertOptions{Name: "foreign-server", Hosts: []string{"127.0.0.1"}})
	return f
}

func TestTLSRoundTrip(t *testing.T) {
	f := newTLSFixture(t)
	for _, require := range []bool{false, true} {
		srvFiles := f.server
		srvFiles.RequireClientCert = require
		addr, c := startTLSServer(t, mustTLS(t)(srvFiles.Config()))
		// A daemon's combined config and a client-only config both work.
		for _, cfg := range []*tls.Config{mustTLS(t)(f.server.Config()), mustTLS(t)(f.client.ClientConfig())} {
			for range 3 {
				if err := tlsCall(t, addr, cfg); err != nil {
					t.Fatalf("require=%v: TLS call: %v", require, err)
				}
			}
		}
		if n := c.calls.Load(); n != 6 {
			t.Fatalf("server saw %d calls, want 6", n)
		}

		// TLS 1.3 is negotiated, and the client certificate is seen.
		conn, err := tls.Dial("tcp", addr, mustTLS(t)(f.client.ClientConfig()))
		if err != nil {
			t.Fatal(err)
		}
		if v := conn.ConnectionState().Version; v != tls.VersionTLS13 {
			t.Errorf("negotiated TLS version %x, want TLS 1.3", v)
		}
		conn.Close()
	}
}

func TestTLSPlaintextClientRefused(t *testing.T) {
	f := newTLSFixture(t)
	srvFiles := f.server
	srvFiles.RequireClientCert = true
	addr, c := startTLSServer(t, mustTLS(t)(srvFiles.Config()))
	if err := tlsCall(t, addr, nil); err == nil {
		t.Fatal("plaintext call to a TLS server succeeded")
	}
	// And the other way round: a TLS client gets no answer from a
	// plaintext server.
	plainAddr, plain := startTLSServer(t, nil)
	if err := tlsCall(t, plainAddr, mustTLS(t)(f.client.ClientConfig())); err == nil {
		t.Fatal("TLS call to a plaintext server succeeded")
	}
	if c.calls.Load() != 0 || plain.calls.Load() != 0 {
		t.Fatalf("servers ran %d and %d calls, want none", c.calls.Load(), plain.calls.Load())
	}
}

func TestTLSClientWithoutCertRefused(t *testing.T) {
	f := newTLSFixture(t)
	noCert := TLSFiles{CA: f.server.CA}

	srvFiles := f.server
	srvFiles.RequireClientCert = true
	addr, c := startTLSServer(t, mustTLS(t)(srvFiles.Config()))
	// Under TLS 1.3 the server refuses the client after the client's side
	// of the handshake completes, so the error is a certificate alert or
	// a broken connection, depending on timing.
	if err := tlsCall(t, addr, mustTLS(t)(noCert.ClientConfig())); err == nil {
		t.Fatal("client without a certificate was served by an mTLS server")
	}
	if n := c.calls.Load(); n != 0 {
		t.Fatalf("server ran %d calls, want none", n)
	}

	// Without RequireClientCert, TLS alone serves certificate-less clients.
	addr, c = startTLSServer(t, mustTLS(t)(f.server.Config()))
	if err := tlsCall(t, addr, mustTLS(t)(noCert.ClientConfig())); err != nil {
		t.Fatalf("TLS-only server refused a client without a certificate: %v", err)
	}
	if n := c.calls.Load(); n != 1 {
		t.Fatalf("server ran %d calls, want 1", n)
	}
}

func TestTLSWrongCAClientRefused(t *testing.T) {
	f := newTLSFixture(t)
	srvFiles := f.server
	srvFiles.RequireClientCert = true
	addr, c := startTLSServer(t, mustTLS(t)(srvFiles.Config()))
	if err := tlsCall(t, addr, mustTLS(t)(f.foreign.ClientConfig())); err == nil {
		t.Fatal("client with another CA's certificate was served by an mTLS server")
	}
	// Go's client only offers a certificate from a CA the server names, so
	// the call above went without one. Force the foreign certificate out,
	// as another implementation might send it: it is refused too, even by
	// a server where certificates are optional.
	forced := mustTLS(t)(f.foreign.ClientConfig())
	cert := forced.Certificates[0]
	forced.Certificates = nil
	forced.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	optAddr, optC := startTLSServer(t, mustTLS(t)(f.server.Config()))
	for _, a := range []string{addr, optAddr} {
		if err := tlsCall(t, a, forced); err == nil {
			t.Fatalf("%s served a client with another CA's certificate", a)
		}
	}
	if c.calls.Load()+optC.calls.Load() != 0 {
		t.Fatal("a server ran calls from a foreign client")
	}
}

func TestTLSServerVerifiedByClient(t *testing.T) {
	f := newTLSFixture(t)
	// A server with another CA's certificate is refused by the client.
	foreignSrv := TLSFiles{Cert: f.foreignSv.Cert, Key: f.foreignSv.Key}
	addr, c := startTLSServer(t, mustTLS(t)(foreignSrv.ServerConfig()))
	err := tlsCall(t, addr, mustTLS(t)(f.client.ClientConfig()))
	var dial *DialError
	if !errors.As(err, &dial) {
		t.Fatalf("call to a server with a foreign certificate: %v, want a DialError", err)
	}
	// A server whose certificate names other hosts is refused too.
	other := f.ca.issue(t, CertOptions{Name: "elsewhere", Hosts: []string{"127.0.0.2", "elsewhere.example"}})
	addr2, c2 := startTLSServer(t, mustTLS(t)(other.Config()))
	if err := tlsCall(t, addr2, mustTLS(t)(f.client.ClientConfig())); err == nil {
		t.Fatal("client accepted a certificate for other hosts")
	} else if !strings.Contains(err.Error(), "127.0.0.1") {
		t.Errorf("hostname error %q does not name the host", err)
	}
	if c.calls.Load()+c2.calls.Load() != 0 {
		t.Fatal("a refused server ran calls")
	}
}

func TestTLSOldVersionRefused(t *testing.T) {
	f := newTLSFixture(t)
	addr, c := startTLSServer(t, mustTLS(t)(f.server.Config()))
	old := mustTLS(t)(f.server.Config())
	old.MinVersion, old.MaxVersion = tls.VersionTLS10, tls.VersionTLS11
	if err := tlsCall(t, addr, old); err == nil {
		t.Fatal("TLS 1.1 client was served")
	}
	// TLS 1.2 is still accepted.
	v12 := mustTLS(t)(f.server.Config())
	v12.MaxVersion = tls.VersionTLS12
	if err := tlsCall(t, addr, v12); err != nil {
		t.Fatalf("TLS 1.2 client: %v", err)
	}
	if n := c.calls.Load(); n != 1 {
		t.Fatalf("server ran %d calls, want 1", n)
	}
}

func TestTLSFilesErrors(t *testing.T) {
	f := newTLSFixture(t)
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.pem")
	writeTestFile(t, garbage, []byte("not a certificate\n"))
	missing := filepath.Join(dir, "missing.pem")
	expired := expiredCert(t, f.ca, dir)

	// The zero value is plaintext.
	for _, fn := range []func() (*tls.Config, error){TLSFiles{}.Config, TLSFiles{}.ServerConfig, TLSFiles{}.ClientConfig} {
		if cfg, err := fn(); cfg != nil || err != nil {
			t.Fatalf("zero TLSFiles gave %v, %v; want nil, nil", cfg, err)
		}
	}
	cases := []struct {
		name  string
		fn    func() (*tls.Config, error)
		wants []string
	}{
		{"missing CA file", TLSFiles{CA: missing, Cert: f.server.Cert, Key: f.server.Key}.Config, []string{"CA file", missing}},
		{"CA file without certificates", TLSFiles{CA: garbage, Cert: f.server.Cert, Key: f.server.Key}.Config, []string{"CA file", garbage, "no PEM"}},
		{"missing cert file", TLSFiles{CA: f.server.CA, Cert: missing, Key: f.server.Key}.Config, []string{"certificate file", missing}},
		{"missing key file", TLSFiles{CA: f.server.CA, Cert: f.server.Cert, Key: missing}.Config, []string{"key file", missing}},
		{"key of another cert", TLSFiles{CA: f.server.CA, Cert: f.server.Cert, Key: f.client.Key}.Config, []string{f.server.Cert, f.client.Key}},
		{"cert from another CA", TLSFiles{CA: f.server.CA, Cert: f.foreignSv.Cert, Key: f.foreignSv.Key}.Config, []string{f.foreignSv.Cert, "does not chain", f.server.CA}},
		{"expired cert", TLSFiles{CA: f.server.CA, Cert: expired.Cert, Key: expired.Key}.Config, []string{expired.Cert, "expired"}},
		{"daemon without CA", TLSFiles{Cert: f.server.Cert, Key: f.server.Key}.Config, []string{"missing a CA file"}},
		{"daemon without key", TLSFiles{CA: f.server.CA, Cert: f.server.Cert}.Config, []string{"missing a key file"}},
		{"server without cert", TLSFiles{CA: f.server.CA, RequireClientCert: true}.ServerConfig, []string{"certificate file", "key file"}},
		{"mTLS server without CA", TLSFiles{Cert: f.server.Cert, Key: f.server.Key, RequireClientCert: true}.ServerConfig, []string{"missing a CA file"}},
		{"client with cert but no key", TLSFiles{CA: f.server.CA, Cert: f.client.Cert}.ClientConfig, []string{"missing a key file"}},
	}
	for _, tc := range cases {
		cfg, err := tc.fn()
		if err == nil {
			t.Errorf("%s: no error (config %v)", tc.name, cfg)
			continue
		}
		for _, w := range tc.wants {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q does not mention %q", tc.name, err, w)
			}
		}
	}

	// Settings that are fine.
	cfg := mustTLS(t)(f.server.Config())
	if cfg.MinVersion != tls.VersionTLS12 || cfg.ClientAuth != tls.VerifyClientCertIfGiven {
		t.Errorf("Config: MinVersion %x ClientAuth %v", cfg.MinVersion, cfg.ClientAuth)
	}
	req := f.server
	req.RequireClientCert = true
	if cfg := mustTLS(t)(req.ServerConfig()); cfg.ClientAuth != tls.RequireAndVerifyClientCert {
		t.Errorf("ServerConfig with RequireClientCert: ClientAuth %v", cfg.ClientAuth)
	}
	if cfg := mustTLS(t)((TLSFiles{Cert: f.server.Cert, Key: f.server.Key}).ServerConfig()); cfg.ClientAuth != tls.NoClientCert {
		t.Errorf("ServerConfig without CA: ClientAuth %v", cfg.ClientAuth)
	}
	if cfg := mustTLS(t)((TLSFiles{CA: f.server.CA}).ClientConfig()); len(cfg.Certificates) != 0 || cfg.RootCAs == nil {
		t.Errorf("ClientConfig with only a CA: %d certificates, roots %v", len(cfg.Certificates), cfg.RootCAs)
	}
}

// expiredCert writes a certificate from ca that expired an hour ago.
func expiredCert(t *testing.T, ca *tlsCA, dir string) TLSFiles {
	t.Helper()
	caCert, caKey, err := parseCA(ca.certPEM, ca.keyPEM)
	if err != nil {
		t.Fatal(err)
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(7), Subject: pkix.Name{CommonName: "expired"},
		NotBefore: time.Now().Add(-48 * time.Hour), NotAfter: time.Now().Add(-time.Hour),
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	f := TLSFiles{Cert: filepath.Join(dir, "expired.crt"), Key: filepath.Join(dir, "expired.key")}
	writeTestFile(t, f.Cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}))
	writeTestFile(t, f.Key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}))
	return f
}

func TestTLSIssueCert(t *testing.T) {
	caPEM, caKeyPEM, err := GenerateCA(CertOptions{ValidFor: 48 * time.Hour, KeyType: KeyEd25519})
	if err != nil {
		t.Fatal(err)
	}
	ca, _, err := parseCA(caPEM, caKeyPEM)
	if err != nil {
		t.Fatal(err)
	}
	if !ca.IsCA || ca.Subject.CommonName != "sparrowfleet CA" || ca.PublicKeyAlgorithm != x509.Ed25519 {
		t.Fatalf("CA: IsCA %v, name %q, key %v", ca.IsCA, ca.Subject.CommonName, ca.PublicKeyAlgorithm)
	}
	for _, kt := range []string{"", KeyECDSAP256, KeyEd25519} {
		certPEM, keyPEM, err := IssueCert(caPEM, caKeyPEM, CertOptions{
			Name: "node-1", Hosts: []string{"node-1.example", " 10.0.0.7", "::1", ""}, KeyType: kt,
		})
		if err != nil {
			t.Fatalf("key type %q: %v", kt, err)
		}
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			t.Fatal(err)
		}
		c := pair.Leaf
		if c.Subject.CommonName != "node-1" || len(c.DNSNames) != 1 || c.DNSNames[0] != "node-1.example" {
			t.Errorf("names: CN %q DNS %v", c.Subject.CommonName, c.DNSNames)
		}
		if len(c.IPAddresses) != 2 || !c.IPAddresses[0].Equal(net.ParseIP("10.0.0.7")) || !c.IPAddresses[1].Equal(net.ParseIP("::1")) {
			t.Errorf("IP SANs %v", c.IPAddresses)
		}
		if c.IsCA || len(c.ExtKeyUsage) != 2 {
			t.Errorf("IsCA %v, EKU %v", c.IsCA, c.ExtKeyUsage)
		}
		// Valid for a year by default, but never beyond its CA.
		if !c.NotAfter.Equal(ca.NotAfter) {
			t.Errorf("NotAfter %v, want the CA's %v", c.NotAfter, ca.NotAfter)
		}
		pool := x509.NewCertPool()
		pool.AddCert(ca)
		for _, use := range []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth} {
			if _, err := c.Verify(x509.VerifyOptions{Roots: pool, DNSName: "node-1.example", KeyUsages: []x509.ExtKeyUsage{use}}); err != nil {
				t.Errorf("key type %q, usage %v: %v", kt, use, err)
			}
		}
	}

	_, otherKey, err := GenerateCA(CertOptions{})
	if err != nil {
		t.Fatal(err)
	}
	leaf, leafKey, err := IssueCert(caPEM, caKeyPEM, CertOptions{Name: "leaf"})
	if err != nil {
		t.Fatal(err)
	}
	bad := []struct {
		name         string
		caPEM, caKey []byte
		opts         CertOptions
		want         string
	}{
		{"host with port", caPEM, caKeyPEM, CertOptions{Name: "x", Hosts: []string{"10.0.0.1:20503"}}, "without ports"},
		{"no name", caPEM, caKeyPEM, CertOptions{}, "name"},
		{"unknown key type", caPEM, caKeyPEM, CertOptions{Name: "x", KeyType: "rsa"}, "unknown key type"},
		{"mismatched CA key", caPEM, otherKey, CertOptions{Name: "x"}, "does not match"},
		{"leaf as CA", leaf, leafKey, CertOptions{Name: "x"}, "not a CA"},
		{"garbage CA", []byte("junk"), caKeyPEM, CertOptions{Name: "x"}, "no PEM"},
	}
	for _, tc := range bad {
		if _, _, err := IssueCert(tc.caPEM, tc.caKey, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
}
