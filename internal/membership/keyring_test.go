package membership

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/memberlist"
	"github.com/rs/zerolog"
)

func testKey(t *testing.T) (string, []byte) {
	t.Helper()
	s, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	k, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	if len(k) != GossipKeySize {
		t.Fatalf("generated key is %d bytes", len(k))
	}
	return s, k
}

func TestKeyringParse(t *testing.T) {
	k1s, k1 := testKey(t)
	k2s, k2 := testKey(t)
	k16 := base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{7}, 16))
	text := "# gossip keys; the first is the primary\n\n  " + k2s + "  # new\r\n" + k1s + "\n" + k2s + "\n" + k16 + ", " + k1s + "\n"
	keys, err := ParseKeys(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(keys) != 3 || !bytes.Equal(keys[0], k2) || !bytes.Equal(keys[1], k1) || len(keys[2]) != 16 {
		t.Fatalf("parsed %d keys in the wrong order or size", len(keys))
	}
	kr, err := NewKeyring(keys)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kr.GetPrimaryKey(), k2) || len(kr.GetKeys()) != 3 {
		t.Fatal("keyring's primary is not the first key")
	}

	// Environment values separate keys with commas.
	kr, err = KeyringFromEnv(k1s + "," + k2s)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kr.GetPrimaryKey(), k1) || len(kr.GetKeys()) != 2 {
		t.Fatal("env keyring: wrong primary or count")
	}

	secret := base64.StdEncoding.EncodeToString([]byte("twenty-byte secret!!"))
	bad := []struct{ text, want string }{
		{"", "no gossip key"},
		{"# only a comment\n\n", "no gossip key"},
		{k1s + "\n" + secret + "\n", "line 2: key is 20 bytes"},
		{"not*base64!", "line 1: key is not valid base64"},
	}
	for _, tc := range bad {
		_, err := ParseKeys(tc.text)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseKeys(%q): %v, want an error with %q", tc.text, err, tc.want)
			continue
		}
		if strings.Contains(err.Error(), secret) || strings.Contains(err.Error(), k1s) {
			t.Errorf("error %q reveals a key", err)
		}
	}
	if _, err := KeyringFromEnv("junk"); err == nil || !strings.Contains(err.Error(), GossipKeyEnv) {
		t.Errorf("KeyringFromEnv error %v does not name $%s", err, GossipKeyEnv)
	}
	if _, err := NewKeyring(nil); err == nil {
		t.Error("NewKeyring(nil) made a keyring: that would silently disable encryption")
	}
	if !LooksLikeKey(k1s) || LooksLikeKey("/etc/sparrow/gossip.keys") {
		t.Error("LooksLikeKey misjudged a key or a path")
	}
}

func TestKeyringLoad(t *testing.T) {
	k1s, k1 := testKey(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "gossip.keys")
	if err := os.WriteFile(path, []byte(k1s+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	kr, err := LoadKeyring(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(kr.GetPrimaryKey(), k1) {
		t.Fatal("loaded the wrong key")
	}
	missing := filepath.Join(dir, "missing.keys")
	if _, err := LoadKeyring(missing); err == nil || !strings.Contains(err.Error(), missing) {
		t.Errorf("missing file: %v, want an error naming it", err)
	}
	short := filepath.Join(dir, "short.keys")
	os.WriteFile(short, []byte("# rotated\n"+k1s+"\nAAAA\n"), 0o600)
	if _, err := LoadKeyring(short); err == nil || !strings.Contains(err.Error(), short) || !strings.Contains(err.Error(), "line 3") {
		t.Errorf("bad key file: %v, want an error naming the file and line 3", err)
	}
}

// gossipMember starts a member on host with keyring kr (nil: plaintext).
func gossipMember(t *testing.T, name, host string, kr *memberlist.Keyring, seeds ...string) *Cluster {
	t.Helper()
	c, err := Start(Config{
		Name: name, Bind: host + ":0", Seeds: seeds, Profile: "local", Keyring: kr,
		Meta: Meta{Role: RoleNodeMonitor}, Log: zerolog.Nop(),
	})
	if err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	t.Cleanup(func() { c.Leave(0) })
	return c
}

func memberNames(c *Cluster) string {
	var names []string
	for _, m := range c.Members("") {
		names = append(names, m.Name)
	}
	return strings.Join(names, ",")
}

func waitView(t *testing.T, c *Cluster, want string) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for memberNames(c) != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s sees [%s], want [%s]", c.Name(), memberNames(c), want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestGossipKeyRotationStages runs members at every stage of the
// documented rotation (old key; new key added as secondary; new key
// primary; old key removed) side by side, as a rolling rotation does, and
// checks that adjacent stages form one cluster, while skipping a stage
// partitions it.
func TestGossipKeyRotationStages(t *testing.T) {
	if testing.Short() {
		t.Skip("starts gossip members")
	}
	_, oldKey := testKey(t)
	_, newKey := testKey(t)
	ring := func(keys ...[]byte) *memberlist.Keyring {
		kr, err := NewKeyring(keys)
		if err != nil {
			t.Fatal(err)
		}
		return kr
	}
	stages := []*memberlist.Keyring{
		ring(oldKey),         // before
		ring(oldKey, newKey), // step 1: new key accepted everywhere
		ring(newKey, oldKey), // step 2: new key used for sending
		ring(newKey),         // step 3: old key removed
	}
	for i := 0; i+1 < len(stages); i++ {
		t.Run(fmt.Sprintf("stage%d+%d", i, i+1), func(t *testing.T) {
			a := gossipMember(t, "a", fmt.Sprintf("127.0.6.%d", 10*i+1), stages[i])
			b := gossipMember(t, "b", fmt.Sprintf("127.0.6.%d", 10*i+2), stages[i+1], a.Addr())
			waitView(t, a, "a,b")
			waitView(t, b, "a,b")
		})
	}

	// Skipping step 1: a member sending with the new key cannot join one
	// that only knows the old key.
	a := gossipMember(t, "a", "127.0.6.101", ring(oldKey))
	mc := memberlist.DefaultLocalConfig()
	mc.Name, mc.BindAddr, mc.BindPort = "skipper", "127.0.6.102", 0
	mc.Keyring, mc.GossipVerifyIncoming, mc.GossipVerifyOutgoing = ring(newKey), true, true
	mc.LogOutput = discard{}
	ml, err := memberlist.Create(mc)
	if err != nil {
		t.Fatal(err)
	}
	defer ml.Shutdown()
	if _, err := ml.Join([]string{a.Addr()}); err == nil {
		t.Fatal("a member with only the new key joined a member with only the old key")
	}
	time.Sleep(500 * time.Millisecond) // several gossip rounds
	if got := memberNames(a); got != "a" {
		t.Fatalf("old-key member sees [%s], want only itself", got)
	}
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
