package procs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"time"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
)

// Role names a kind of member.
type Role string

// The roles whose cost the benchmark reports.
const (
	Scheduler   Role = "scheduler"
	NodeMonitor Role = "nodemonitor"
	Executor    Role = "executor"
	Frontend    Role = "frontend"
)

// Roles is every role in presentation order.
var Roles = []Role{Scheduler, NodeMonitor, Executor, Frontend}

// member is one child process.
type member struct {
	role Role
	name string
	http string // operator endpoint, "" if none
	cmd  *exec.Cmd
	log  *os.File
	done chan struct{} // closed when the process has been waited for
	err  error         // its exit, valid after done
}

// start runs binary with args as a member, its output in dir/name.log.
func start(binary, dir string, role Role, name, http string, args []string) (*member, error) {
	f, err := os.Create(filepath.Join(dir, name+".log"))
	if err != nil {
		return nil, fmt.Errorf("log file for %s: %w", name, err)
	}
	cmd := exec.Command(binary, args...)
	cmd.Stdout, cmd.Stderr = f, f
	// Its own process group, so a signal to the benchmark's terminal does
	// not race the orderly shutdown below.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		f.Close()
		return nil, fmt.Errorf("start %s (%s %v): %w", name, binary, args, err)
	}
	m := &member{role: role, name: name, http: http, cmd: cmd, log: f, done: make(chan struct{})}
	go func() {
		m.err = cmd.Wait()
		f.Close()
		close(m.done)
	}()
	return m, nil
}

// alive reports an error if the process has exited.
func (m *member) alive() error {
	select {
	case <-m.done:
		return fmt.Errorf("%s exited early (%v); see %s", m.name, m.err, m.log.Name())
	default:
		return nil
	}
}

// stop sends SIGTERM and waits up to grace, then kills.
func (m *member) stop(grace time.Duration) {
	select {
	case <-m.done:
		return
	default:
	}
	_ = m.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-m.done:
	case <-time.After(grace):
		_ = m.cmd.Process.Kill()
		<-m.done
	}
}

// status fetches the member's /status.
func (m *member) status(ctx context.Context) (httpapi.Status, error) {
	var st httpapi.Status
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.http+"/status", nil)
	if err != nil {
		return st, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return st, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return st, fmt.Errorf("%s /status: %s", m.name, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return st, err
	}
	return st, json.Unmarshal(body, &st)
}

// waitReady polls until every scheduler sees nodes node monitors and every
// node monitor has an executor for app, or the deadline passes.
func waitReady(ctx context.Context, members []*member, nodes int, app string, deadline time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, deadline)
	defer cancel()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	var why string
	for {
		why = ""
		for _, m := range members {
			if err := m.alive(); err != nil {
				return err
			}
			if m.http == "" || why != "" {
				continue
			}
			st, err := m.status(ctx)
			switch {
			case err != nil:
				why = fmt.Sprintf("%s: %v", m.name, err)
			case m.role == Scheduler && (st.Scheduler == nil || st.Scheduler.NodeMonitors < nodes):
				why = fmt.Sprintf("%s sees fewer than %d node monitors", m.name, nodes)
			case m.role == NodeMonitor && (st.NodeMonitor == nil || !slices.Contains(st.NodeMonitor.Apps, app)):
				why = fmt.Sprintf("%s has no executor for %q yet", m.name, app)
			}
		}
		if why == "" {
			return nil
		}
		select {
		case <-ctx.Done():
			return errors.Join(fmt.Errorf("fleet not ready after %v: %s", deadline, why), context.Cause(ctx))
		case <-tick.C:
		}
	}
}
