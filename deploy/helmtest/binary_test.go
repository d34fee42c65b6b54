package helmtest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
)

// sparrowBin is the sparrow binary built from this checkout by TestMain.
var sparrowBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "helmtest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sparrowBin = filepath.Join(dir, "sparrow")
	build := exec.Command("go", "build", "-o", sparrowBin, "./cmd/sparrow")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "build sparrow: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// commandHelp is what `sparrow <cmd> --help` says: the flags it takes and
// the whole text, where environment variables and HTTP paths are named.
type commandHelp struct {
	flags map[string]string // flag name -> its help line
	text  string
}

var (
	helpMu    sync.Mutex
	helpCache = map[string]*commandHelp{}
)

// flagLine matches a flag in cobra's help: "  -h, --help   help for x".
var flagLine = regexp.MustCompile(`^\s+(?:-\w, )?--([a-z0-9][a-z0-9-]*)\b(.*)$`)

// help runs `sparrow cmd --help` once per command and parses it.
func help(t *testing.T, cmd string) *commandHelp {
	t.Helper()
	helpMu.Lock()
	defer helpMu.Unlock()
	if h, ok := helpCache[cmd]; ok {
		return h
	}
	out, err := exec.Command(sparrowBin, cmd, "--help").CombinedOutput()
	if err != nil {
		t.Fatalf("sparrow %s --help: %v\n%s", cmd, err, out)
	}
	h := &commandHelp{flags: map[string]string{}, text: string(out)}
	inFlags := false
	for _, line := range strings.Split(h.text, "\n") {
		switch {
		case strings.HasSuffix(line, "Flags:"):
			inFlags = true
		case inFlags:
			if m := flagLine.FindStringSubmatch(line); m != nil {
				h.flags[m[1]] = m[2]
			}
		}
	}
	if len(h.flags) == 0 {
		t.Fatalf("sparrow %s --help lists no flags:\n%s", cmd, out)
	}
	helpCache[cmd] = h
	return h
}

// The help parser finds real flags and no others, so that the checks
// built on it can fail.
func TestHelpParser(t *testing.T) {
	for _, tc := range []struct {
		cmd, flag string
		want      bool
	}{
		{"scheduler", "listen", true},
		{"scheduler", "log-level", true},
		{"scheduler", "help", true},
		{"nodemonitor", "internal-listen", true},
		{"nodemonitor", "gettask-listen", false},
		{"executor", "node-monitor", true},
		{"coordinator", "no-such-flag", false},
	} {
		if _, got := help(t, tc.cmd).flags[tc.flag]; got != tc.want {
			t.Errorf("sparrow %s has --%s: %v, want %v", tc.cmd, tc.flag, got, tc.want)
		}
	}
}
