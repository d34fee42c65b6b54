package integration

import (
	"cmp"
	"context"
	"errors"
	"go/format"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// tutorialBlock is a code block of docs/tutorial.md that the test runs:
// the line before its ```go fence names the file it is saved as.
var tutorialBlock = regexp.MustCompile("(?s)<!-- file: (\\S+) -->\n```go\n(.*?)```")

// tutorialCommand is one of the tutorial's `bin/sparrow scheduler`,
// `nodemonitor` or `status` lines.
var tutorialCommand = regexp.MustCompile(`(?m)^bin/sparrow (scheduler|nodemonitor|status) .*$`)

// TestTutorial runs docs/tutorial.md as written: it saves the Go programs
// it shows into a module of their own that uses this repository through a
// replace directive, builds them, starts the scheduler and the node
// monitor with the tutorial's own command lines (each 127.0.0.1 address
// rewritten to a free one, the same for every mention), runs the executor,
// checks that the tutorial's `sparrow status` line lists the app, runs the
// frontend on files it writes and checks the counts printed (and a
// missing file's failure); then restarts the node monitor, checks that the
// executor registers again and the next run works, as the tutorial says,
// and that the executor exits 0 on SIGTERM.
func TestTutorial(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the sparrow binary and the tutorial's programs")
	}
	doc, err := os.ReadFile("../docs/tutorial.md")
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, m := range tutorialBlock.FindAllStringSubmatch(string(doc), -1) {
		files[m[1]] = m[2]
	}
	if names := slices.Sorted(maps.Keys(files)); !slices.Equal(names, []string{"executor/main.go", "wordcount/main.go"}) {
		t.Fatalf("the tutorial's marked files are %v, want executor/main.go and wordcount/main.go", names)
	}
	for name, code := range files {
		if formatted, err := format.Source([]byte(code)); err != nil || string(formatted) != code {
			t.Errorf("%s is not gofmt-formatted (%v)", name, err)
		}
		if n := strings.Count(code, "\n"); n > 90 {
			t.Errorf("%s is %d lines: no longer a short program", name, n)
		}
	}

	bin := buildSparrow(t, false) // as `make run` builds bin/sparrow
	progs := buildTutorialModule(t, files)

	// Each 127.0.0.1 address of the daemons' lines becomes a free one.
	addrs := map[string]string{}
	free := regexp.MustCompile(`127\.0\.0\.1:\d+`)
	var commands [][]string
	for _, line := range tutorialCommand.FindAllString(string(doc), -1) {
		line = free.ReplaceAllStringFunc(line, func(a string) string {
			if _, ok := addrs[a]; !ok {
				addrs[a] = interopFreePort(t, "127.0.0.1")
			}
			return addrs[a]
		})
		commands = append(commands, strings.Fields(line)[1:])
	}
	if len(commands) != 3 || commands[0][0] != "scheduler" || commands[1][0] != "nodemonitor" || commands[2][0] != "status" {
		t.Fatalf("the tutorial's sparrow command lines are %v, want a scheduler, a node monitor and status", commands)
	}
	daemons, status := commands[:2], commands[2]
	for _, a := range []string{"127.0.0.1:20503", "127.0.0.1:20501", "127.0.0.1:7946"} {
		if addrs[a] == "" {
			t.Fatalf("the tutorial's daemons no longer use %s, which its programs and commands default to", a)
		}
	}
	startTutorialDaemon(t, bin, daemons[0])
	nodeMonitor := startTutorialDaemon(t, bin, daemons[1])

	env := append(os.Environ(),
		"SPARROW_SCHEDULERS="+addrs["127.0.0.1:20503"],
		"SPARROW_NODE_MONITOR="+addrs["127.0.0.1:20501"])
	executor := startTutorialProgram(t, filepath.Join(progs, "executor"), env)
	waitFor(t, "the tutorial's executor to register", 30*time.Second, func() bool {
		return strings.Contains(executor.out.String(), "executor ready at") || executor.exited()
	})
	if executor.exited() {
		t.Fatalf("the executor exited: %v\n%s", executor.waitErr, executor.out.String())
	}

	// sparrow status shows the app on the node monitor's 4 slots, once
	// gossip has carried the executor's registration.
	var fleet string
	waitFor(t, "sparrow status to list app wordcount", 30*time.Second, func() bool {
		out, err := exec.CommandContext(t.Context(), bin, status...).CombinedOutput()
		fleet = string(out)
		return err == nil && regexp.MustCompile(`(?m)^wordcount\s+1\s+4\s*$`).MatchString(fleet)
	})
	t.Logf("sparrow status printed:\n%s", fleet)

	dir := t.TempDir()
	inputs := map[string]string{
		"a.txt": "The cat, the hat.\n",
		"b.txt": strings.Repeat("one two three\n", 10),
		"c.txt": "",
	}
	for name, content := range inputs {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	wordcount := func(args ...string) (string, int) {
		t.Helper()
		ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, filepath.Join(progs, "wordcount"), args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.Output()
		var exit *exec.ExitError
		switch {
		case err == nil:
			return string(out), 0
		case errors.As(err, &exit):
			return string(out) + string(exit.Stderr), exit.ExitCode()
		default:
			t.Fatalf("wordcount %v: %v", args, err)
			return "", -1
		}
	}
	checkCounts := func(out string, code int, want map[string]string, total string) {
		t.Helper()
		t.Logf("wordcount printed:\n%s", out)
		if code != 0 {
			t.Fatalf("wordcount exited %d:\n%s", code, out)
		}
		lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
		got := map[string]string{}
		for _, l := range lines[:len(lines)-1] {
			if f := strings.Fields(l); len(f) == 2 {
				got[f[1]] = f[0]
			}
		}
		if !maps.Equal(got, want) || lines[len(lines)-1] != total {
			t.Fatalf("wordcount printed\n%s\nwant the counts %v and %q last", out, want, total)
		}
	}

	out, code := wordcount("a.txt", "b.txt", "c.txt")
	checkCounts(out, code, map[string]string{"a.txt": "4", "b.txt": "30", "c.txt": "0"}, "34 words in 3 files")

	out, code = wordcount("a.txt", "missing.txt")
	if code != 1 || !regexp.MustCompile(`(?m)^failed: missing\.txt: open \S*/missing\.txt: no such file or directory$`).MatchString(out) ||
		!strings.HasSuffix(out, "\n4 words in 1 files\n") {
		t.Fatalf("wordcount with a missing file exited %d and printed\n%s\nwant exit 1, its failure and the other file's count", code, out)
	}

	// The node monitor restarts: the executor registers again by itself.
	nodeMonitor.stop(t)
	waitFor(t, "the executor to notice its node monitor gone", 30*time.Second, func() bool {
		return strings.Contains(executor.out.String(), "node monitor unreachable; will register again when it is back")
	})
	startTutorialDaemon(t, bin, daemons[1])
	waitFor(t, "the executor to register again", 30*time.Second, func() bool {
		return strings.Contains(executor.out.String(), "node monitor is back; registered again")
	})
	out, code = wordcount("b.txt", "a.txt")
	checkCounts(out, code, map[string]string{"a.txt": "4", "b.txt": "30"}, "34 words in 2 files")

	// SIGTERM: the executor drains and exits 0.
	if err := executor.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case <-executor.done:
	case <-time.After(interopStopTimeout):
		t.Fatalf("the executor still runs %v after SIGTERM", interopStopTimeout)
	}
	if executor.waitErr != nil {
		t.Fatalf("the executor exited with %v after SIGTERM, want 0 (66 is a data race):\n%s", executor.waitErr, executor.out.String())
	}
}

// buildTutorialModule saves files into a module of their own that uses
// this repository through a replace directive, as the tutorial's step 3
// sets it up, and builds its programs with the race detector. It returns
// the directory of the binaries, one per program directory. It builds
// offline: -mod=mod adds the requirements from the module cache, with the
// repository's go.sum for their checksums (go mod tidy, which the
// tutorial runs online, also wants its dependencies' test-only ones).
func buildTutorialModule(t *testing.T, files map[string]string) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	mod := t.TempDir()
	for name, code := range files {
		path := filepath.Join(mod, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	sums, err := os.ReadFile(filepath.Join(root, "go.sum"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.sum"), sums, 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	for _, args := range [][]string{
		{"mod", "init", "example.com/wordcount"},
		{"mod", "edit", "-replace", "github.com/sparrowfleet/sparrow=" + root},
		{"build", "-race", "-o", "bin/", "./..."},
	} {
		cmd := exec.CommandContext(ctx, "go", args...)
		cmd.Dir = mod
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	return filepath.Join(mod, "bin")
}

// startTutorialDaemon starts bin with args, a daemon's command line from
// the tutorial, and waits until its --listen, second Thrift and --gossip
// addresses accept connections.
func startTutorialDaemon(t *testing.T, bin string, args []string) *sparrowProc {
	t.Helper()
	flag := func(name string) string {
		if i := slices.Index(args, name); i >= 0 && i+1 < len(args) {
			return args[i+1]
		}
		return ""
	}
	d := &sparrowProc{
		role:    args[0],
		service: flag("--listen"),
		second:  cmp.Or(flag("--gettask-listen"), flag("--internal-listen")),
		gossip:  flag("--gossip"),
	}
	if d.service == "" || d.second == "" || d.gossip == "" {
		t.Fatalf("the tutorial's %s line lacks a listen or gossip address: %v", d.role, args)
	}
	d.launch(t, exec.Command(bin, args...))
	if err := d.waitReady(); err != nil {
		t.Fatalf("%s did not come up: %v\n%s", d.role, err, d.out.String())
	}
	return d
}

// startTutorialProgram starts one of the tutorial's programs with env.
func startTutorialProgram(t *testing.T, path string, env []string) *sparrowProc {
	t.Helper()
	d := &sparrowProc{role: filepath.Base(path)}
	cmd := exec.Command(path)
	cmd.Env = env
	d.launch(t, cmd)
	return d
}
