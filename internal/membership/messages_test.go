package membership

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSendBestEffortTo checks that a best-effort message reaches the named
// member's handlers, and that an unknown member is refused by name. UDP
// may drop a packet, so the message is resent until it arrives.
func TestSendBestEffortTo(t *testing.T) {
	a, b := startPair(t, "127.0.6.21", "127.0.6.22", RoleCoordinator)
	var mu sync.Mutex
	var got [][]byte
	b.OnMessage(func(m []byte) {
		mu.Lock()
		got = append(got, m)
		mu.Unlock()
	})

	if err := a.SendBestEffortTo("nobody", []byte("x")); err == nil || !strings.Contains(err.Error(), "nobody") {
		t.Errorf("sending to an unknown member: error %v, want one naming it", err)
	}
	msg := []byte("direct reply")
	deadline := time.Now().Add(10 * time.Second)
	for {
		// b is sendable once a's view holds it.
		if err := a.SendBestEffortTo("b", msg); err != nil && !strings.Contains(err.Error(), "not a live member") {
			t.Fatal(err)
		}
		mu.Lock()
		arrived := len(got) > 0 && bytes.Equal(got[0], msg)
		mu.Unlock()
		if arrived {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("no best-effort message arrived")
		}
		time.Sleep(20 * time.Millisecond) // polling interval of a condition wait
	}
}
