package scale

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
	"time"
)

// childConn is the harness's end of one child's control protocol: it
// sends one command at a time and waits for its reply, passing progress
// and launch events to its hooks as they come.
type childConn struct {
	name  string
	mu    sync.Mutex // one command at a time
	w     io.Writer
	reply chan Event
	done  chan struct{} // closed when the event stream ends
	err   error         // why it ended, read after done
	hooks childHooks
}

// childHooks receive a child's unsolicited events, on its reader
// goroutine.
type childHooks struct {
	progress func(started, of int)
	launch   func(Launch)
}

// newChildConn reads events from r and writes commands to w until r ends.
func newChildConn(name string, r io.Reader, w io.Writer, hooks childHooks) *childConn {
	c := &childConn{name: name, w: w, reply: make(chan Event, 1), done: make(chan struct{}), hooks: hooks}
	go c.read(r)
	return c
}

func (c *childConn) read(r io.Reader) {
	defer close(c.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	for sc.Scan() {
		e, err := parseEvent(sc.Bytes())
		if err != nil {
			c.err = err
			return
		}
		switch e.Kind {
		case evProgress:
			if c.hooks.progress != nil {
				c.hooks.progress(e.Started, e.Of)
			}
		case evLaunch:
			if c.hooks.launch != nil {
				c.hooks.launch(*e.Launch)
			}
		default:
			select {
			case c.reply <- e:
			default:
				c.err = fmt.Errorf("unrequested %s event", e.Kind)
				return
			}
		}
	}
	c.err = sc.Err()
	if c.err == nil {
		c.err = io.EOF
	}
}

// call sends cmd and returns the reply, which must be of kind want.
func (c *childConn) call(ctx context.Context, cmd Command, want string) (Event, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, err := c.w.Write(encodeLine(cmd)); err != nil {
		return Event{}, fmt.Errorf("%s: send %s: %w", c.name, cmd.Op, err)
	}
	select {
	case e := <-c.reply:
		switch e.Kind {
		case want:
			return e, nil
		case evFailed:
			return Event{}, fmt.Errorf("%s: %s: %s", c.name, cmd.Op, e.Error)
		}
		return Event{}, fmt.Errorf("%s: %s answered %s, want %s", c.name, cmd.Op, e.Kind, want)
	case <-c.done:
		return Event{}, fmt.Errorf("%s: %s: no reply, its events ended: %w", c.name, cmd.Op, c.err)
	case <-ctx.Done():
		return Event{}, fmt.Errorf("%s: %s: %w", c.name, cmd.Op, ctx.Err())
	}
}

// counters reads the child's gossip counters and CPU time so far.
func (c *childConn) counters(ctx context.Context) (GossipTotals, time.Duration, error) {
	e, err := c.call(ctx, Command{Op: opCounters}, evCounters)
	if err != nil {
		return GossipTotals{}, 0, err
	}
	return *e.Gossip, time.Duration(e.CPUNanos), nil
}

// childProc is a child process and the harness's end of its protocol.
type childProc struct {
	*childConn
	cmd   *exec.Cmd
	stdin io.Closer
	slice SliceSpec // the node monitors it hosts
}

// stopGrace is how long a child has to stop its slice (every member
// leaves the gossip cluster) before it is killed.
const stopGrace = 30 * time.Second

// spawnChild starts command as a child speaking the control protocol on
// its stdin and stdout; its stderr is this process's. The child dies with
// this process: it is sent SIGKILL when the parent dies (where the system
// offers that) and stops at the end of its stdin.
func spawnChild(name string, command func() *exec.Cmd, hooks childHooks) (*childProc, error) {
	cmd := command()
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = os.Stderr
	dieWithParent(cmd)
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &childProc{childConn: newChildConn(name, stdout, stdin, hooks), cmd: cmd, stdin: stdin}, nil
}

// stop asks the child to stop its slice and waits for it to exit, killing
// it after stopGrace.
func (p *childProc) stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), stopGrace)
	defer cancel()
	_, err := p.call(ctx, Command{Op: opStop}, evStopped)
	p.stdin.Close()
	exited := make(chan error, 1)
	go func() { exited <- p.cmd.Wait() }()
	select {
	case werr := <-exited:
		return errors.Join(err, werr)
	case <-ctx.Done():
		p.cmd.Process.Kill()
		return errors.Join(err, <-exited)
	}
}
