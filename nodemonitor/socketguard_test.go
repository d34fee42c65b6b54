package nodemonitor

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The package's tests run in memory, through fakes: none may open a
// socket. Each harness checks when its test ends, and TestMain once all
// tests ran, that the process holds no socket (on Linux, where /proc
// lists a process's descriptors; elsewhere the check passes). A socket
// opened and closed before those checks goes unseen: the guard catches
// the listeners and pooled connections a loopback test would leave.

func TestMain(m *testing.M) {
	code := m.Run()
	if n := openSockets(); n > 0 {
		fmt.Fprintf(os.Stderr, "nodemonitor tests left %d sockets open; they must run in memory\n", n)
		code = 1
	}
	os.Exit(code)
}

// openSockets counts the process's open socket descriptors.
func openSockets() int {
	fds, _ := filepath.Glob("/proc/self/fd/*")
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(fd); err == nil && strings.HasPrefix(target, "socket:") {
			n++
		}
	}
	return n
}

// noSockets fails t if the process holds a socket.
func noSockets(t *testing.T) {
	t.Helper()
	if n := openSockets(); n > 0 {
		t.Errorf("%d sockets open: the package's tests must run in memory", n)
	}
}
