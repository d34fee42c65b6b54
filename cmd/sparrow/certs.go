package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/internal/certfiles"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/rpc"
)

func init() { rootCmd.AddCommand(newCertsCmd()) }

func newCertsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "certs",
		Short: "Make the cluster CA, member certificates and gossip keys",
		Long: `Make what a secured fleet needs (see docs/SECURITY.md): a cluster CA,
a certificate for each member signed by it (daemons, frontends and executors;
each is usable as both TLS server and client certificate), and gossip
encryption keys. Private keys are written with mode 0600; existing files are
never overwritten without --force.`,
		Args: noArgs,
	}
	cmd.AddCommand(newCertsCACmd(), newCertsIssueCmd(), newCertsGossipKeyCmd())
	return cmd
}

func newCertsCACmd() *cobra.Command {
	var (
		out, name, keyType string
		validFor           time.Duration
		force              bool
	)
	cmd := &cobra.Command{
		Use:   "ca",
		Short: "Make a new cluster CA (ca.crt and ca.key)",
		Long: `Make a self-signed cluster CA: DIR/ca.crt, the certificate every member
trusts (--tls-ca), and DIR/ca.key, its private key, which signs member
certificates. Keep ca.key offline or at least off the fleet: whoever holds
it can mint certificates that the whole cluster accepts.`,
		Example: "  sparrow certs ca --out /secure/sparrow-ca",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out is required")
			}
			certPath, keyPath, err := certfiles.WriteCA(out, rpc.CertOptions{Name: name, ValidFor: validFor, KeyType: keyType}, force)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (distribute to every member as --tls-ca)\nwrote %s (private: keep it off the fleet)\n", certPath, keyPath)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&out, "out", "", "directory to write ca.crt and ca.key to (created with mode 0700 if missing; required)")
	fs.StringVar(&name, "name", "sparrowfleet CA", "the CA certificate's common name")
	fs.StringVar(&keyType, "key-type", rpc.KeyECDSAP256, "private key type: "+rpc.KeyECDSAP256+" or "+rpc.KeyEd25519)
	fs.DurationVar(&validFor, "valid-for", rpc.DefaultCAValidity, "how long the CA certificate is valid")
	fs.BoolVar(&force, "force", false, "overwrite existing files")
	return cmd
}

func newCertsIssueCmd() *cobra.Command {
	var (
		caDir, name, out, keyType string
		hosts                     []string
		validFor                  time.Duration
		force                     bool
	)
	cmd := &cobra.Command{
		Use:   "issue",
		Short: "Issue a member certificate signed by the cluster CA",
		Long: `Issue a certificate and key for one member, signed by the CA in --ca-dir,
valid for both TLS server and client authentication. Writes OUT/NAME.crt,
OUT/NAME.key (mode 0600) and a copy of the CA certificate, OUT/ca.crt, so
OUT holds everything the member needs: --tls-ca OUT/ca.crt --tls-cert
OUT/NAME.crt --tls-key OUT/NAME.key.

--hosts must list every DNS name and IP address peers use to reach the
member's Thrift services: callers check it. For a daemon that is the host of
its advertised addresses (--advertise-host, else the --gossip host); for an
executor the host it registers with its node monitor (usually 127.0.0.1);
for a frontend its advertised host, since schedulers call it back.`,
		Example: `  sparrow certs issue --ca-dir /secure/sparrow-ca --name sched-1 --hosts sched-1.example.net,10.0.0.1 --out ./sched-1
  sparrow certs issue --ca-dir /secure/sparrow-ca --name worker-7 --hosts 10.0.0.7,127.0.0.1 --out ./worker-7`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch {
			case caDir == "":
				return errors.New("--ca-dir is required")
			case out == "":
				return errors.New("--out is required")
			}
			f, err := certfiles.Issue(caDir, out, rpc.CertOptions{Name: name, Hosts: hosts, ValidFor: validFor, KeyType: keyType}, force)
			if err != nil {
				return err
			}
			certPath, keyPath, caPath := f.Cert, f.Key, f.CA
			w := cmd.OutOrStdout()
			if len(hosts) == 0 {
				fmt.Fprintln(w, "note: no --hosts, so the certificate only works as a client certificate")
			}
			fmt.Fprintf(w, "wrote %s, %s and %s\nuse: --tls-ca %s --tls-cert %s --tls-key %s\n",
				certPath, keyPath, caPath, caPath, certPath, keyPath)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&caDir, "ca-dir", "", "directory holding the CA's ca.crt and ca.key (from sparrow certs ca; required)")
	fs.StringVar(&name, "name", "", "member name: the certificate's common name and the output files' base name (required)")
	fs.StringSliceVar(&hosts, "hosts", nil, "comma-separated DNS names and IP addresses (no ports) peers use to reach this member; become the certificate's subject alternative names")
	fs.StringVar(&out, "out", "", "directory to write NAME.crt, NAME.key and ca.crt to (created with mode 0700 if missing; required)")
	fs.StringVar(&keyType, "key-type", rpc.KeyECDSAP256, "private key type: "+rpc.KeyECDSAP256+" (widest client support) or "+rpc.KeyEd25519)
	fs.DurationVar(&validFor, "valid-for", rpc.DefaultCertValidity, "how long the certificate is valid (capped at the CA's expiry)")
	fs.BoolVar(&force, "force", false, "overwrite existing files")
	return cmd
}

func newCertsGossipKeyCmd() *cobra.Command {
	var (
		out   string
		force bool
	)
	cmd := &cobra.Command{
		Use:   "gossip-key",
		Short: "Make a random gossip encryption key (AES-256, base64)",
		Long: `Make a random 32-byte gossip encryption key, base64-encoded on one line,
for --gossip-key-file or $` + membership.GossipKeyEnv + `. The file is written
with mode 0600. To rotate keys, add a new key as a second line everywhere,
then move it to the first line everywhere, then delete the old line (see
docs/SECURITY.md).`,
		Example: `  sparrow certs gossip-key --out /etc/sparrow/gossip.keys
  sparrow certs gossip-key --out - >> /etc/sparrow/gossip.keys   # append a key for rotation`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errors.New("--out is required")
			}
			key, err := membership.GenerateKey()
			if err != nil {
				return err
			}
			if out == "-" {
				_, err := fmt.Fprintln(cmd.OutOrStdout(), key)
				return err
			}
			if err := certfiles.WriteFile(out, []byte(key+"\n"), 0o600, force); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s (mode 0600)\n", out)
			return nil
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&out, "out", "", `file to write the key to, with mode 0600, or "-" for standard output (required)`)
	fs.BoolVar(&force, "force", false, "overwrite an existing file")
	return cmd
}
