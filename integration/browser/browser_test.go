package browser

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/sparrowfleet/sparrow/internal/dashboard"
	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
)

// chromium finds the browser, or skips the test with how to get one
// (fails instead where SPARROW_BROWSER_REQUIRE is set, as in CI).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("SPARROW_BROWSER_REQUIRE") != "" {
		t.Fatal("no Chromium on $PATH and SPARROW_BROWSER_REQUIRE is set (Debian: apt-get install chromium)")
	}
	t.Skip("no Chromium on $PATH: the dashboard's browser tests need it (Debian: apt-get install chromium)")
	return ""
}

// browser is a headless Chromium tab that records every console error,
// uncaught exception and failed load.
type browser struct {
	ctx    context.Context
	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T) *browser {
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium(t)), chromedp.NoSandbox, chromedp.DisableGPU,
		chromedp.WindowSize(1400, 1800), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	t.Cleanup(func() { cancelTab(); cancelAlloc() })
	b := &browser{ctx: ctx}
	if err := chromedp.Listen(ctx, func(ev any) {
		var msg string
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == runtime.ConsoleAPICalledTypeError || ev.Type == runtime.ConsoleAPICalledTypeAssert {
				var parts []string
				for _, a := range ev.Args {
					parts = append(parts, string(a.Value))
				}
				msg = "console: " + strings.Join(parts, " ")
			}
		case *runtime.EventExceptionThrown:
			msg = fmt.Sprintf("exception: %s (%s:%d)", ev.ExceptionDetails.Text, ev.ExceptionDetails.URL, ev.ExceptionDetails.LineNumber)
			if ex := ev.ExceptionDetails.Exception; ex != nil {
				msg += " " + ex.Description
			}
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				msg = "log: " + ev.Entry.Text + " " + ev.Entry.URL
			}
		}
		if msg != "" {
			b.mu.Lock()
			b.errors = append(b.errors, msg)
			b.mu.Unlock()
		}
	}); err != nil {
		t.Fatalf("start Chromium: %v", err)
	}
	return b
}

func (b *browser) consoleErrors() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.errors...)
}

// waitFor polls the page until the JavaScript expression is true, failing
// the test with what after the deadline.
func (b *browser) waitFor(t *testing.T, what, expr string, within time.Duration) {
	t.Helper()
	ok, err := chromedp.Run(b.ctx, chromedp.Poll[bool](expr, chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(within)))
	if err != nil || !ok {
		html, _ := chromedp.Run(b.ctx, chromedp.OuterHTML(chromedp.CSS("#content")))
		t.Fatalf("waiting %v for %s (%s): %v\npage:\n%s", within, what, expr, err, html)
	}
}

// fleet is a loopback fleet of separate sparrow processes.
type fleet struct {
	t     *testing.T
	bin   string
	net   string // 127.0.N: each member has its own host in it
	mu    sync.Mutex
	procs map[string]*exec.Cmd
}

func newFleet(t *testing.T) *fleet {
	bin := filepath.Join(t.TempDir(), "sparrow")
	// Built in the product's own module, with its go.sum.
	build := exec.Command("go", "build", "-o", bin, "./cmd/sparrow")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build sparrow: %v\n%s", err, out)
	}
	f := &fleet{t: t, bin: bin, net: fmt.Sprintf("127.0.%d", 200+rand.IntN(50)), procs: map[string]*exec.Cmd{}}
	t.Cleanup(f.stopAll)
	return f
}

func (f *fleet) host(i int) string { return fmt.Sprintf("%s.%d", f.net, i) }

func (f *fleet) start(name string, args ...string) {
	f.t.Helper()
	cmd := exec.Command(f.bin, append(args, "--log-level", "warn")...)
	logf, err := os.Create(filepath.Join(f.t.TempDir(), name+".log"))
	if err != nil {
		f.t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	if err := cmd.Start(); err != nil {
		f.t.Fatalf("start %s: %v", name, err)
	}
	f.mu.Lock()
	f.procs[name] = cmd
	f.mu.Unlock()
}

func (f *fleet) kill(name string) {
	f.mu.Lock()
	cmd := f.procs[name]
	delete(f.procs, name)
	f.mu.Unlock()
	if cmd != nil {
		cmd.Process.Kill()
		cmd.Wait()
	}
}

func (f *fleet) stopAll() {
	f.mu.Lock()
	names := make([]string, 0, len(f.procs))
	for n := range f.procs {
		names = append(names, n)
	}
	f.mu.Unlock()
	for _, n := range names {
		f.kill(n)
	}
}

// drive starts a driver submitting one user's jobs to the scheduler.
func (f *fleet) drive(name, user string, listenHost int, rate string) {
	f.start(name, "drive", "--schedulers", f.host(1)+":20503", "--listen", f.host(listenHost)+":50201",
		"--user", user, "--jobs", "100000", "--tasks", "2", "--task-duration", "300ms", "--rate", rate, "--deadline", "10m")
}

// TestDashboardLiveFleet drives the dashboard a scheduler serves at /ui/
// through a live fleet's life: every member listed, per-user work that
// moves with the load, a killed node monitor shown dead, and no console
// error throughout.
func TestDashboardLiveFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a fleet of processes and a browser")
	}
	b := newBrowser(t)
	f := newFleet(t)
	seed := f.host(1) + ":7946"
	f.start("sched0", "scheduler", "--name", "sched0", "--gossip", seed, "--listen", f.host(1)+":20503",
		"--gettask-listen", f.host(1)+":20507", "--http-listen", f.host(1)+":9100", "--gossip-profile", "local")
	const nodes = 3
	for i := 1; i <= nodes; i++ {
		h := f.host(10 + i)
		f.start(fmt.Sprint("nm", i), "nodemonitor", "--name", fmt.Sprint("nm", i), "--gossip", h+":7946", "--join", seed,
			"--slots", "4", "--listen", h+":20501", "--internal-listen", h+":20502", "--http-listen", h+":9100", "--gossip-profile", "local")
		f.start(fmt.Sprint("exec", i), "executor", "--app", "sleep", "--node", fmt.Sprint("nm", i),
			"--node-monitor", h+":20501", "--listen", h+":20101")
	}

	url := "http://" + f.host(1) + ":9100/ui/"
	// The daemon answers once it has started; until then the navigation
	// fails, so try again until it loads.
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := chromedp.Do(b.ctx, chromedp.Navigate(url))
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the scheduler's dashboard never loaded: %v", err)
		}
		time.Sleep(200 * time.Millisecond) // the daemon is starting; nothing to wait on but its port
	}
	b.waitFor(t, "every member listed", `document.querySelectorAll('.cell.h-ready').length === 3 && !!document.querySelector('tr.member[data-name="sched0"][data-health="ready"]')`, 30*time.Second)

	running := func(user string) string {
		return fmt.Sprintf(`(function(){var r=document.querySelector('tr.user[data-user=%q]');return r?Number(r.dataset.running):-1})()`, user)
	}
	f.drive("drive-alice", "alice", 3, "8")
	b.waitFor(t, "alice's work shown", running("alice")+` > 0`, 30*time.Second)
	f.kill("drive-alice")
	f.drive("drive-bob", "bob", 4, "8")
	b.waitFor(t, "bob's work shown and alice's gone", running("bob")+` > 0 && `+running("alice")+` <= 0`, 30*time.Second)

	f.kill("nm2")
	killed := time.Now()
	b.waitFor(t, "the killed node monitor shown dead", `!!document.querySelector('.cell.h-dead[data-name="nm2"]')`, 20*time.Second)
	t.Logf("nm2 shown dead %v after it was killed", time.Since(killed).Round(100*time.Millisecond))

	if err := chromedp.Do(b.ctx, chromedp.Navigate(url+"node?name=nm1")); err != nil {
		t.Fatalf("node detail page: %v", err)
	}
	detail, err := chromedp.Run(b.ctx, chromedp.Text(chromedp.CSS("#node")))
	if err != nil {
		t.Fatalf("node detail page: %v", err)
	}
	if !strings.Contains(detail, "nm1") || !strings.Contains(detail, "slots") {
		t.Errorf("nm1's detail page shows %q", detail)
	}
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("the page raised console errors:\n%s", strings.Join(errs, "\n"))
	}
}

// syntheticFleet is a gossip view of n node monitors and their answers.
type syntheticFleet struct{ members []membership.Member }

func (s syntheticFleet) Members(membership.Role) []membership.Member { return s.members }

func (s syntheticFleet) Status(_ context.Context, addr string) (httpapi.Status, error) {
	var i int
	if _, err := fmt.Sscanf(addr, "nm%d:9100", &i); err != nil {
		return httpapi.Status{}, errors.New("no such member")
	}
	running := i % 5
	return httpapi.Status{Ready: true, Role: membership.RoleNodeMonitor, NodeMonitor: &httpapi.NodeMonitorStatus{
		Slots: 4, Running: min(running, 4), Free: max(0, 4-running), Queued: i % 3,
		Users: map[string]httpapi.UserCounts{fmt.Sprint("user", i%7): {Running: min(running, 4), Queued: i % 3}},
	}}, nil
}

// TestDashboardThousandNodes renders a synthetic fleet of 1,000 node
// monitors and logs how long the page took.
func TestDashboardThousandNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	b := newBrowser(t)
	const n = 1000
	fleet := syntheticFleet{}
	for i := range n {
		fleet.members = append(fleet.members, membership.Member{Name: fmt.Sprint("nm", i), Gossip: fmt.Sprintf("nm%d:7946", i),
			Meta: membership.Meta{Role: membership.RoleNodeMonitor, HTTP: fmt.Sprintf("nm%d:9100", i), Slots: 4, Apps: []string{"sleep"}}})
	}
	d := dashboard.New(dashboard.Config{Source: fleet, Fetcher: fleet})
	for i := range 5 {
		d.Poll(context.Background(), time.Unix(1000+int64(2*i), 0))
	}
	srv := httptest.NewServer(d.Handler("/ui/"))
	defer srv.Close()
	start := time.Now()
	if err := chromedp.Do(b.ctx, chromedp.Navigate(srv.URL+"/ui/")); err != nil {
		t.Fatal(err)
	}
	b.waitFor(t, "1,000 cells", `document.querySelectorAll('.cell').length === 1000 && Array.from(document.images).every(i => i.complete && i.naturalWidth > 0)`, 30*time.Second)
	t.Logf("a 1,000-node fleet rendered, charts included, in %v", time.Since(start).Round(time.Millisecond))
	if errs := b.consoleErrors(); len(errs) > 0 {
		t.Errorf("the page raised console errors:\n%s", strings.Join(errs, "\n"))
	}
}
