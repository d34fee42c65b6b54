package certfiles

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"

	"github.com/sparrowfleet/sparrow/internal/rpc"
)

// The CA's files in a CA directory.
const (
	CACertFile = "ca.crt"
	CAKeyFile  = "ca.key"
)

// WriteCA makes a self-signed cluster CA and writes dir/ca.crt and
// dir/ca.key (mode 0600), creating dir with mode 0700 if missing. Without
// force it refuses to replace either file.
func WriteCA(dir string, opt rpc.CertOptions, force bool) (certPath, keyPath string, err error) {
	certPEM, keyPEM, err := rpc.GenerateCA(opt)
	if err != nil {
		return "", "", err
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", "", err
	}
	certPath, keyPath = filepath.Join(dir, CACertFile), filepath.Join(dir, CAKeyFile)
	if !force {
		if err := noneExist(certPath, keyPath); err != nil {
			return "", "", err
		}
	}
	if err := WriteFile(keyPath, keyPEM, 0o600, force); err != nil {
		return "", "", err
	}
	if err := WriteFile(certPath, certPEM, 0o644, force); err != nil {
		return "", "", err
	}
	return certPath, keyPath, nil
}

// validName keeps certificate names usable as file names.
var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Issued are the files Issue wrote.
type Issued struct{ Cert, Key, CA string }

// Issue issues a member certificate, named opt.Name, signed by the CA in
// caDir, and writes out/NAME.crt, out/NAME.key (mode 0600) and a copy of
// the CA certificate, out/ca.crt. Without force it refuses to replace the
// certificate or key, or a different CA certificate.
func Issue(caDir, out string, opt rpc.CertOptions, force bool) (Issued, error) {
	name := opt.Name
	switch {
	case !validName.MatchString(name):
		return Issued{}, fmt.Errorf("--name %q: want letters, digits, '.', '-' or '_' (it names the files)", name)
	case name == "ca":
		return Issued{}, errors.New(`--name "ca" would clash with the CA certificate's file name`)
	}
	caCert, err := os.ReadFile(filepath.Join(caDir, CACertFile))
	if err != nil {
		return Issued{}, fmt.Errorf("CA certificate: %w", err)
	}
	caKey, err := os.ReadFile(filepath.Join(caDir, CAKeyFile))
	if err != nil {
		return Issued{}, fmt.Errorf("CA key: %w", err)
	}
	certPEM, keyPEM, err := rpc.IssueCert(caCert, caKey, opt)
	if err != nil {
		return Issued{}, fmt.Errorf("CA in %s: %w", caDir, err)
	}
	if err := os.MkdirAll(out, 0o700); err != nil {
		return Issued{}, err
	}
	f := Issued{Cert: filepath.Join(out, name+".crt"), Key: filepath.Join(out, name+".key"), CA: filepath.Join(out, CACertFile)}
	if !force {
		if err := noneExist(f.Cert, f.Key); err != nil {
			return Issued{}, err
		}
		if old, err := os.ReadFile(f.CA); err == nil && !bytes.Equal(old, caCert) {
			return Issued{}, fmt.Errorf("%s exists and is a different CA certificate (use --force to replace it)", f.CA)
		}
	}
	if err := WriteFile(f.Key, keyPEM, 0o600, force); err != nil {
		return Issued{}, err
	}
	if err := WriteFile(f.Cert, certPEM, 0o644, force); err != nil {
		return Issued{}, err
	}
	if err := WriteFile(f.CA, caCert, 0o644, true); err != nil {
		return Issued{}, err
	}
	return f, nil
}

// noneExist fails if any of paths exists.
func noneExist(paths ...string) error {
	for _, p := range paths {
		if _, err := os.Lstat(p); err == nil {
			return fmt.Errorf("%s already exists (use --force to overwrite)", p)
		} else if !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// WriteFile writes data to path with exactly mode perm: through a
// temporary file, so that a key is never readable by others even for a
// moment, and without replacing an existing file unless force.
func WriteFile(path string, data []byte, perm os.FileMode, force bool) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		return err
	}
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	if force {
		return os.Rename(tmp.Name(), path)
	}
	// Link fails if path exists, so a concurrent writer is never clobbered.
	if err := os.Link(tmp.Name(), path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%s already exists (use --force to overwrite)", path)
		}
		return err
	}
	os.Remove(tmp.Name())
	return nil
}
