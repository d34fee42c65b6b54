package membership

import (
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/hashicorp/memberlist"
)

// GossipKeyEnv is the environment variable that may hold the gossip keys
// instead of a key file.
const GossipKeyEnv = "SPARROW_GOSSIP_KEY"

// GossipKeySize is the size of keys GenerateKey makes: 32 bytes, AES-256.
const GossipKeySize = 32

// GenerateKey returns a new random gossip key, base64-encoded.
func GenerateKey() (string, error) {
	k := make([]byte, GossipKeySize)
	if _, err := rand.Read(k); err != nil {
		return "", fmt.Errorf("generate gossip key: %w", err)
	}
	return base64.StdEncoding.EncodeToString(k), nil
}

// ParseKeys parses gossip keys: base64-encoded 16, 24 or 32-byte AES keys,
// one per line (commas and spaces also separate keys, so an environment
// variable can hold several); blank lines and text after '#' are ignored.
// The first key is the primary. A key listed twice counts once. Errors
// name the line, never the key.
func ParseKeys(text string) ([][]byte, error) {
	var keys [][]byte
	for i, line := range strings.Split(text, "\n") {
		if c := strings.IndexByte(line, '#'); c >= 0 {
			line = line[:c]
		}
		fields := strings.FieldsFunc(line, func(r rune) bool {
			return r == ',' || r == ' ' || r == '\t' || r == '\r'
		})
		for _, f := range fields {
			k, err := base64.StdEncoding.DecodeString(f)
			if err != nil {
				return nil, fmt.Errorf("line %d: key is not valid base64", i+1)
			}
			if err := memberlist.ValidateKey(k); err != nil {
				return nil, fmt.Errorf("line %d: key is %d bytes; want 16, 24 or 32 (AES-128, -192 or -256)", i+1, len(k))
			}
			dup := false
			for _, have := range keys {
				dup = dup || bytes.Equal(have, k)
			}
			if !dup {
				keys = append(keys, k)
			}
		}
	}
	if len(keys) == 0 {
		return nil, errors.New("no gossip key found")
	}
	return keys, nil
}

// NewKeyring returns a memberlist keyring holding keys, with keys[0] as
// the primary: the key messages are encrypted with. Every key is tried
// when decrypting, which is what lets a cluster rotate keys without a
// partition.
func NewKeyring(keys [][]byte) (*memberlist.Keyring, error) {
	if len(keys) == 0 {
		return nil, errors.New("no gossip key given")
	}
	kr, err := memberlist.NewKeyring(keys[1:], keys[0])
	if err != nil {
		return nil, fmt.Errorf("gossip keyring: %w", err)
	}
	return kr, nil
}

// LoadKeyring reads a gossip key file (see ParseKeys) into a keyring.
func LoadKeyring(path string) (*memberlist.Keyring, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gossip key file: %w", err)
	}
	keys, err := ParseKeys(string(data))
	if err != nil {
		return nil, fmt.Errorf("gossip key file %s: %w", path, err)
	}
	return NewKeyring(keys)
}

// KeyringFromEnv parses the keys in GossipKeyEnv's value into a keyring.
func KeyringFromEnv(value string) (*memberlist.Keyring, error) {
	keys, err := ParseKeys(value)
	if err != nil {
		return nil, fmt.Errorf("$%s: %w", GossipKeyEnv, err)
	}
	return NewKeyring(keys)
}

// LooksLikeKey reports whether s parses as gossip keys, to catch a key
// given where a file name belongs.
func LooksLikeKey(s string) bool {
	_, err := ParseKeys(s)
	return err == nil
}
