package daemon

import (
	"fmt"
	"os"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"
	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// SecurityFlags are the TLS and gossip-encryption flags every daemon
// shares. Plaintext is the default; docs/SECURITY.md explains the setup.
// Commands that serve no Thrift register GossipKeyFile alone.
type SecurityFlags struct {
	TLS           rpc.TLSFiles
	GossipKeyFile string
}

// Register adds the flags to fs.
func (s *SecurityFlags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&s.TLS.CA, "tls-ca", "", "PEM file of the cluster CA certificate(s); with --tls-cert and --tls-key, turns on TLS for every Thrift service this daemon serves and every call it makes (see docs/SECURITY.md)")
	fs.StringVar(&s.TLS.Cert, "tls-cert", "", "PEM file of this daemon's certificate, issued by the --tls-ca CA for the hosts peers dial (sparrow certs issue)")
	fs.StringVar(&s.TLS.Key, "tls-key", "", "PEM file of the private key for --tls-cert")
	fs.BoolVar(&s.TLS.RequireClientCert, "tls-require-client-cert", false, "mutual TLS: refuse every caller (frontends, executors, other daemons) without a certificate from the --tls-ca CA")
	fs.StringVar(&s.GossipKeyFile, "gossip-key-file", "", "file of base64 gossip encryption keys (16, 24 or 32 bytes), one per line, the first used for sending and all accepted; encrypts gossip and refuses members without a key. $"+membership.GossipKeyEnv+" may hold the keys instead (sparrow certs gossip-key)")
}

// Apply loads the TLS files into rpcCfg.TLS, logs how exposed the daemon
// is, and returns the gossip keyring, nil for plaintext gossip.
func (s *SecurityFlags) Apply(log zerolog.Logger, rpcCfg *rpc.Config) (*memberlist.Keyring, error) {
	if s.TLS.Enabled() {
		if s.TLS.CA == "" || s.TLS.Cert == "" || s.TLS.Key == "" {
			return nil, fmt.Errorf("TLS needs all of --tls-ca, --tls-cert and --tls-key")
		}
		cfg, err := s.TLS.Config()
		if err != nil {
			return nil, err
		}
		rpcCfg.TLS = cfg
	}
	keyring, source, err := s.Keyring(log)
	if err != nil {
		return nil, err
	}
	switch {
	case !s.TLS.Enabled() && keyring == nil:
		log.Warn().Msg("plaintext Thrift and gossip: anyone who can reach the ports can submit jobs, call internal services and join the cluster (see docs/SECURITY.md)")
		return nil, nil
	case s.TLS.Enabled() && s.TLS.RequireClientCert:
		log.Info().Msg("Thrift: mutual TLS; callers need a certificate from the cluster CA")
	case s.TLS.Enabled():
		log.Warn().Msg("Thrift: TLS without --tls-require-client-cert; anyone who can reach the ports can submit jobs and call internal services")
	default:
		log.Warn().Msg("Thrift: plaintext; anyone who can reach the ports can submit jobs and call internal services (see --tls-*)")
	}
	if keyring != nil {
		log.Info().Str("keys_from", source).Int("keys", len(keyring.GetKeys())).Msg("gossip: encrypted; members without the key are refused")
	} else {
		log.Warn().Msg("gossip: plaintext; anyone who can reach the gossip port can join the cluster (see --gossip-key-file)")
	}
	return keyring, nil
}

// Keyring reads the gossip keys from --gossip-key-file or the
// environment, and says which; nil when neither is set.
func (s *SecurityFlags) Keyring(log zerolog.Logger) (*memberlist.Keyring, string, error) {
	env, inEnv := os.LookupEnv(membership.GossipKeyEnv)
	switch {
	case s.GossipKeyFile != "" && inEnv:
		return nil, "", fmt.Errorf("both --gossip-key-file and $%s are set; use one", membership.GossipKeyEnv)
	case s.GossipKeyFile != "":
		if _, err := os.Stat(s.GossipKeyFile); err != nil && membership.LooksLikeKey(s.GossipKeyFile) {
			// Never echo it: it is probably a key.
			return nil, "", fmt.Errorf("--gossip-key-file takes the path of a key file, not a key: put the key in a file (mode 0600) or in $%s, and consider it exposed (command lines are visible to other users)", membership.GossipKeyEnv)
		}
		kr, err := membership.LoadKeyring(s.GossipKeyFile)
		if err != nil {
			return nil, "", err
		}
		if fi, err := os.Stat(s.GossipKeyFile); err == nil && fi.Mode().Perm()&0o077 != 0 {
			log.Warn().Str("file", s.GossipKeyFile).Str("mode", fmt.Sprintf("%04o", fi.Mode().Perm())).
				Msg("gossip key file is accessible to other users; chmod 600 it")
		}
		return kr, s.GossipKeyFile, nil
	case inEnv:
		kr, err := membership.KeyringFromEnv(env)
		return kr, "$" + membership.GossipKeyEnv, err
	}
	return nil, "", nil
}
