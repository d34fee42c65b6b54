package rpc

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"strings"
	"time"
)

// MinTLSVersion is the oldest TLS version sparrowfleet speaks. Go
// negotiates TLS 1.3 whenever the peer supports it.
const MinTLSVersion = tls.VersionTLS12

// TLSFiles names the PEM files of a member's TLS identity. The zero value
// means plaintext: its config methods return a nil *tls.Config.
//
// A daemon is both a server and a client (schedulers call node monitors and
// frontends; node monitors call schedulers and executors), so daemons,
// frontends and executors use Config, whose single *tls.Config serves
// rpc.Config.TLS for both listening and dialing. ServerConfig and
// ClientConfig are for processes that only serve or only call.
type TLSFiles struct {
	// CA is a PEM bundle of the cluster's CA certificates. Clients verify
	// servers against it; servers verify client certificates against it.
	CA string
	// Cert is this member's PEM certificate (optionally followed by
	// intermediates) and Key its PEM private key.
	Cert, Key string
	// RequireClientCert makes servers refuse callers without a
	// certificate issued by CA (mutual TLS). Without it, servers still
	// verify any certificate a caller does present.
	RequireClientCert bool
}

// Enabled reports whether any TLS setting is given.
func (f TLSFiles) Enabled() bool {
	return f.CA != "" || f.Cert != "" || f.Key != "" || f.RequireClientCert
}

// Config returns a TLS config for a member that both serves and calls, for
// rpc.Config.TLS: it presents Cert as the server certificate and as the
// client certificate, verifies servers against CA, and verifies client
// certificates against CA (requiring them if RequireClientCert). CA, Cert
// and Key are all required; the certificate must chain to CA and allow
// both server and client authentication, as "sparrow certs issue" makes
// it. It returns nil, nil when f is the zero value.
func (f TLSFiles) Config() (*tls.Config, error) {
	if !f.Enabled() {
		return nil, nil
	}
	if err := f.need(true, true); err != nil {
		return nil, err
	}
	pool, err := loadCAPool(f.CA)
	if err != nil {
		return nil, err
	}
	cert, err := loadKeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, err
	}
	inter := x509.NewCertPool()
	for _, der := range cert.Certificate[1:] {
		if c, err := x509.ParseCertificate(der); err == nil {
			inter.AddCert(c)
		}
	}
	if _, err := cert.Leaf.Verify(x509.VerifyOptions{
		Roots: pool, Intermediates: inter,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}); err != nil {
		// Verify checks the usages as alternatives; a member needs both.
		return nil, fmt.Errorf("TLS certificate file %s does not chain to a CA in %s: %w", f.Cert, f.CA, err)
	}
	if err := checkUsage(cert.Leaf, f.Cert, x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth); err != nil {
		return nil, err
	}
	return &tls.Config{
		MinVersion:   MinTLSVersion,
		Certificates: []tls.Certificate{cert},
		RootCAs:      pool,
		ClientCAs:    pool,
		ClientAuth:   f.clientAuth(),
	}, nil
}

// ServerConfig returns a TLS config for a process that only serves. Cert
// and Key are required; CA is required when RequireClientCert is set. It
// returns nil, nil when f is the zero value.
func (f TLSFiles) ServerConfig() (*tls.Config, error) {
	if !f.Enabled() {
		return nil, nil
	}
	if err := f.need(f.RequireClientCert, true); err != nil {
		return nil, err
	}
	cert, err := loadKeyPair(f.Cert, f.Key)
	if err != nil {
		return nil, err
	}
	if err := checkUsage(cert.Leaf, f.Cert, x509.ExtKeyUsageServerAuth); err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: MinTLSVersion, Certificates: []tls.Certificate{cert}}
	if f.CA != "" {
		if cfg.ClientCAs, err = loadCAPool(f.CA); err != nil {
			return nil, err
		}
		cfg.ClientAuth = f.clientAuth()
	}
	return cfg, nil
}

// ClientConfig returns a TLS config for a process that only calls. Servers
// are verified against CA, or against the system's roots when CA is empty.
// Cert and Key, given together, are presented to servers that ask for a
// client certificate. It returns nil, nil when f is the zero value.
func (f TLSFiles) ClientConfig() (*tls.Config, error) {
	if !f.Enabled() {
		return nil, nil
	}
	if err := f.need(false, false); err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: MinTLSVersion}
	if f.CA != "" {
		pool, err := loadCAPool(f.CA)
		if err != nil {
			return nil, err
		}
		cfg.RootCAs = pool
	}
	if f.Cert != "" {
		cert, err := loadKeyPair(f.Cert, f.Key)
		if err != nil {
			return nil, err
		}
		if err := checkUsage(cert.Leaf, f.Cert, x509.ExtKeyUsageClientAuth); err != nil {
			return nil, err
		}
		cfg.Certificates = []tls.Certificate{cert}
	}
	return cfg, nil
}

func (f TLSFiles) clientAuth() tls.ClientAuthType {
	if f.RequireClientCert {
		return tls.RequireAndVerifyClientCert
	}
	return tls.VerifyClientCertIfGiven
}

// need checks that the files a config needs are named.
func (f TLSFiles) need(ca, pair bool) error {
	var missing []string
	if ca && f.CA == "" {
		missing = append(missing, "a CA file")
	}
	if (pair || f.Key != "") && f.Cert == "" {
		missing = append(missing, "a certificate file")
	}
	if (pair || f.Cert != "") && f.Key == "" {
		missing = append(missing, "a key file")
	}
	if len(missing) > 0 {
		return fmt.Errorf("TLS settings incomplete: missing %s", strings.Join(missing, " and "))
	}
	return nil
}

// loadCAPool reads a PEM bundle of CA certificates.
func loadCAPool(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("TLS CA file: %w", err)
	}
	pool := x509.NewCertPool()
	n := 0
	for rest := data; ; {
		var block *pem.Block
		block, rest = pem.Decode(rest)
		if block == nil {
			break
		}
		if block.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(block.Bytes)
		if err != nil {
			return nil, fmt.Errorf("TLS CA file %s: certificate %d: %w", path, n+1, err)
		}
		pool.AddCert(c)
		n++
	}
	if n == 0 {
		return nil, fmt.Errorf("TLS CA file %s: no PEM CERTIFICATE block found", path)
	}
	return pool, nil
}

// loadKeyPair reads a certificate and its key, and checks that the
// certificate is valid now.
func loadKeyPair(certFile, keyFile string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS certificate file: %w", err)
	}
	keyPEM, err := os.ReadFile(keyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS key file: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("TLS certificate file %s with key file %s: %w", certFile, keyFile, err)
	}
	if cert.Leaf == nil {
		if cert.Leaf, err = x509.ParseCertificate(cert.Certificate[0]); err != nil {
			return tls.Certificate{}, fmt.Errorf("TLS certificate file %s: %w", certFile, err)
		}
	}
	now := time.Now()
	if now.Before(cert.Leaf.NotBefore) {
		return tls.Certificate{}, fmt.Errorf("TLS certificate file %s is not valid until %s", certFile, cert.Leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	if now.After(cert.Leaf.NotAfter) {
		return tls.Certificate{}, fmt.Errorf("TLS certificate file %s expired at %s", certFile, cert.Leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	return cert, nil
}

// checkUsage checks that a certificate's extended key usage allows each
// of uses; a certificate with none listed allows all.
func checkUsage(c *x509.Certificate, path string, uses ...x509.ExtKeyUsage) error {
	if len(c.ExtKeyUsage) == 0 {
		return nil
	}
	for _, use := range uses {
		ok := false
		for _, have := range c.ExtKeyUsage {
			ok = ok || have == use || have == x509.ExtKeyUsageAny
		}
		if !ok {
			what := "server"
			if use == x509.ExtKeyUsageClientAuth {
				what = "client"
			}
			return fmt.Errorf("TLS certificate file %s is not valid for TLS %s authentication (extended key usage); issue it with \"sparrow certs issue\"", path, what)
		}
	}
	return nil
}

// Key types for GenerateCA and IssueCert.
const (
	KeyECDSAP256 = "ecdsa-p256"
	KeyEd25519   = "ed25519"
)

// Default certificate lifetimes.
const (
	DefaultCAValidity   = 10 * 365 * 24 * time.Hour
	DefaultCertValidity = 365 * 24 * time.Hour
)

// CertOptions describes a certificate to make.
type CertOptions struct {
	// Name is the subject's common name.
	Name string
	// Hosts are the DNS names and IP addresses peers use to reach the
	// member; they become the certificate's subject alternative names,
	// which clients check. Ignored for a CA.
	Hosts []string
	// ValidFor is the lifetime; zero picks DefaultCAValidity or
	// DefaultCertValidity. A certificate never outlives its CA.
	ValidFor time.Duration
	// KeyType is KeyECDSAP256 (the default) or KeyEd25519.
	KeyType string
}

// GenerateCA makes a self-signed CA certificate and key, PEM-encoded.
func GenerateCA(opts CertOptions) (certPEM, keyPEM []byte, err error) {
	if opts.Name == "" {
		opts.Name = "sparrowfleet CA"
	}
	if opts.ValidFor == 0 {
		opts.ValidFor = DefaultCAValidity
	}
	key, keyPEM, err := newKey(opts.KeyType)
	if err != nil {
		return nil, nil, err
	}
	tmpl, err := template(opts.Name, opts.ValidFor, key.Public())
	if err != nil {
		return nil, nil, err
	}
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.MaxPathLenZero = true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, key.Public(), key)
	if err != nil {
		return nil, nil, fmt.Errorf("create CA certificate: %w", err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

// IssueCert makes a certificate and key signed by the CA, usable for both
// TLS server and client authentication.
func IssueCert(caCertPEM, caKeyPEM []byte, opts CertOptions) (certPEM, keyPEM []byte, err error) {
	if opts.Name == "" {
		return nil, nil, errors.New("certificate needs a name")
	}
	if opts.ValidFor == 0 {
		opts.ValidFor = DefaultCertValidity
	}
	ca, caKey, err := parseCA(caCertPEM, caKeyPEM)
	if err != nil {
		return nil, nil, err
	}
	var ips []net.IP
	var dns []string
	for _, h := range opts.Hosts {
		h = strings.TrimSpace(h)
		switch {
		case h == "":
		case net.ParseIP(h) != nil:
			ips = append(ips, net.ParseIP(h))
		case strings.ContainsAny(h, ":/ \t"):
			return nil, nil, fmt.Errorf("host %q is not a DNS name or IP address (give hosts without ports)", h)
		default:
			dns = append(dns, h)
		}
	}
	key, keyPEM, err := newKey(opts.KeyType)
	if err != nil {
		return nil, nil, err
	}
	tmpl, err := template(opts.Name, opts.ValidFor, key.Public())
	if err != nil {
		return nil, nil, err
	}
	if tmpl.NotAfter.After(ca.NotAfter) {
		tmpl.NotAfter = ca.NotAfter
	}
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
	tmpl.DNSNames, tmpl.IPAddresses = dns, ips
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("issue certificate for %q: %w", opts.Name, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), keyPEM, nil
}

func newKey(kind string) (crypto.Signer, []byte, error) {
	var key crypto.Signer
	var err error
	switch kind {
	case "", KeyECDSAP256:
		key, err = ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	case KeyEd25519:
		_, key, err = ed25519.GenerateKey(rand.Reader)
	default:
		return nil, nil, fmt.Errorf("unknown key type %q (want %s or %s)", kind, KeyECDSAP256, KeyEd25519)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("generate %s key: %w", kind, err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, fmt.Errorf("encode private key: %w", err)
	}
	return key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der}), nil
}

func template(name string, validFor time.Duration, pub crypto.PublicKey) (*x509.Certificate, error) {
	if validFor < 0 {
		return nil, fmt.Errorf("certificate lifetime %v is negative", validFor)
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return nil, fmt.Errorf("certificate serial number: %w", err)
	}
	spki, err := x509.MarshalPKIXPublicKey(pub)
	if err != nil {
		return nil, fmt.Errorf("encode public key: %w", err)
	}
	ski := sha256.Sum256(spki)
	now := time.Now()
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: name, Organization: []string{"sparrowfleet"}},
		NotBefore:    now.Add(-5 * time.Minute), // tolerate clock skew
		NotAfter:     now.Add(validFor),
		SubjectKeyId: ski[:20],
	}, nil
}

// parseCA parses a CA certificate and its private key and checks that they
// belong together.
func parseCA(certPEM, keyPEM []byte) (*x509.Certificate, crypto.Signer, error) {
	block, _ := pem.Decode(certPEM)
	if block == nil || block.Type != "CERTIFICATE" {
		return nil, nil, errors.New("CA certificate: no PEM CERTIFICATE block")
	}
	ca, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, nil, fmt.Errorf("CA certificate: %w", err)
	}
	if !ca.IsCA {
		return nil, nil, errors.New("CA certificate is not a CA (basic constraints)")
	}
	kblock, _ := pem.Decode(keyPEM)
	if kblock == nil {
		return nil, nil, errors.New("CA key: no PEM block")
	}
	var parsed any
	switch kblock.Type {
	case "PRIVATE KEY":
		parsed, err = x509.ParsePKCS8PrivateKey(kblock.Bytes)
	case "EC PRIVATE KEY":
		parsed, err = x509.ParseECPrivateKey(kblock.Bytes)
	default:
		return nil, nil, fmt.Errorf("CA key: unsupported PEM block %q", kblock.Type)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("CA key: %w", err)
	}
	signer, ok := parsed.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("CA key: %T cannot sign", parsed)
	}
	pub, ok := signer.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(ca.PublicKey) {
		return nil, nil, errors.New("CA key does not match the CA certificate")
	}
	if time.Now().After(ca.NotAfter) {
		return nil, nil, fmt.Errorf("CA certificate expired at %s", ca.NotAfter.UTC().Format(time.RFC3339))
	}
	return ca, signer, nil
}
