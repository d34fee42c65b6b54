package procs

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
)

// FleetSpec is a fleet of separate processes of the sparrow binary on
// loopback: schedulers, node monitors and one sleep executor beside each
// node monitor. Run and other harnesses (bench/overload) start it with
// StartFleet.
type FleetSpec struct {
	// Binary is the sparrow binary every member runs.
	Binary string
	// Schedulers, NodeMonitors and Slots (per node monitor) shape it.
	Schedulers, NodeMonitors, Slots int
	// GossipProfile is every member's --gossip-profile.
	GossipProfile string
	// Net is the first two octets of the members' loopback addresses:
	// role r's member i listens on Net.r.(i+1) (Addr).
	Net string
	// Dir receives every member's log, NAME.log.
	Dir string
	// LogLevel is the daemons' --log-level; "" is warn.
	LogLevel string
	// Pprof serves Go's profiler on the daemons' operator endpoints.
	Pprof bool
	// SchedulerArgs and NodeMonitorArgs are extra flags for every
	// scheduler and every node monitor, after the fleet's own.
	SchedulerArgs, NodeMonitorArgs []string
	// ReadyTimeout bounds the wait for the fleet to form.
	ReadyTimeout time.Duration
}

func (s *FleetSpec) validate() error {
	switch {
	case s.Binary == "":
		return fmt.Errorf("no sparrow binary")
	case s.Schedulers < 1 || s.Schedulers > 200:
		return fmt.Errorf("schedulers %d: want 1 to 200", s.Schedulers)
	case s.NodeMonitors < 1 || s.NodeMonitors > 250:
		return fmt.Errorf("node monitors %d: want 1 to 250", s.NodeMonitors)
	case s.Slots < 1:
		return fmt.Errorf("slots %d: want at least 1", s.Slots)
	case len(strings.Split(s.Net, ".")) != 2:
		return fmt.Errorf("net %q: want two octets such as 127.60", s.Net)
	}
	return nil
}

// Fleet is a started fleet. Stop it when done.
type Fleet struct {
	spec    FleetSpec
	members []*member
	scheds  []string
}

// MemberInfo describes one member process.
type MemberInfo struct {
	Role Role
	Name string
	PID  int
	// HTTP is its operator endpoint ("" for executors, which serve none).
	HTTP string
	// Log is the path of its log file.
	Log string
}

// Addr is the address of role r's member i on port: Net.r.(i+1):port.
// Schedulers are role 1, node monitors and executors role 2; role 3 is
// free for the driver.
func (f *Fleet) Addr(role, i, port int) string { return addr(f.spec.Net, role, i, port) }

func addr(network string, role, i, port int) string {
	return fmt.Sprintf("%s.%d.%d:%d", network, role, i+1, port)
}

// The ports each role's members bind (Addr's role numbers); gossip binds
// UDP as well as TCP. Role 3 is the drivers'.
var rolePorts = map[int][]int{1: {20503, 20507, 7946, 9190}, 2: {20501, 20502, 7946, 9190, 20101}, 3: {50201}}

// gossipPort binds UDP too.
const gossipPort = 7946

// taken returns an error naming the first address, of those a fleet of
// this shape with drivers drivers binds on network, that something else holds
// now, or nil if all are free. A member that cannot bind exits at once,
// so a fleet started over another one (a run left over, or a second run
// on the same net) fails as "exited early" without this check.
func taken(network string, schedulers, nodeMonitors, drivers int) error {
	for role, n := range map[int]int{1: schedulers, 2: nodeMonitors, 3: drivers} {
		for i := range n {
			for _, port := range rolePorts[role] {
				a := addr(network, role, i, port)
				ln, err := net.Listen("tcp", a)
				if err != nil {
					return fmt.Errorf("%s is taken (another fleet on net %s, or one left running?): %w", a, network, err)
				}
				ln.Close()
				if port != gossipPort {
					continue
				}
				pc, err := net.ListenPacket("udp", a)
				if err != nil {
					return fmt.Errorf("%s/udp is taken (another fleet on net %s, or one left running?): %w", a, network, err)
				}
				pc.Close()
			}
		}
	}
	return nil
}

// FreeNet returns a loopback network, two octets such as 127.87, on which
// every address a fleet of this shape with drivers drivers binds is free
// now. Tests use it rather than a fixed network, which another process on
// the machine may hold.
func FreeNet(schedulers, nodeMonitors, drivers int) (string, error) {
	var last error
	for _, b := range rand.Perm(190) {
		network := fmt.Sprintf("127.%d", 64+b)
		if last = taken(network, schedulers, nodeMonitors, drivers); last == nil {
			return network, nil
		}
	}
	return "", fmt.Errorf("no free loopback network: %w", last)
}

// StartFleet starts every member, each with its log in spec.Dir, and waits
// until every scheduler sees every node monitor and every node monitor has
// its executor. On error nothing it started is left running. say, if not
// nil, receives a progress line.
func StartFleet(ctx context.Context, spec FleetSpec, say func(string)) (*Fleet, error) {
	if err := spec.validate(); err != nil {
		return nil, err
	}
	if spec.LogLevel == "" {
		spec.LogLevel = "warn"
	}
	if err := taken(spec.Net, spec.Schedulers, spec.NodeMonitors, 0); err != nil {
		return nil, err
	}
	f := &Fleet{spec: spec}
	ok := false
	defer func() {
		if !ok {
			f.Stop()
		}
	}()
	common := []string{"--gossip-profile", spec.GossipProfile, "--log-level", spec.LogLevel}
	if spec.Pprof {
		common = append(common, "--pprof")
	}
	seed := f.Addr(1, 0, 7946)
	for i := range spec.Schedulers {
		name := fmt.Sprintf("sched%d", i)
		args := append([]string{"scheduler", "--name", name,
			"--listen", f.Addr(1, i, 20503), "--gettask-listen", f.Addr(1, i, 20507),
			"--gossip", f.Addr(1, i, 7946), "--http-listen", f.Addr(1, i, 9190)}, common...)
		if i > 0 {
			args = append(args, "--join", seed)
		}
		if err := f.start(Scheduler, name, f.Addr(1, i, 9190), append(args, spec.SchedulerArgs...)); err != nil {
			return nil, err
		}
		f.scheds = append(f.scheds, f.Addr(1, i, 20503))
	}
	for i := range spec.NodeMonitors {
		name := fmt.Sprintf("nm%d", i)
		args := append([]string{"nodemonitor", "--name", name, "--slots", strconv.Itoa(spec.Slots),
			"--listen", f.Addr(2, i, 20501), "--internal-listen", f.Addr(2, i, 20502),
			"--gossip", f.Addr(2, i, 7946), "--http-listen", f.Addr(2, i, 9190), "--join", seed}, common...)
		if err := f.start(NodeMonitor, name, f.Addr(2, i, 9190), append(args, spec.NodeMonitorArgs...)); err != nil {
			return nil, err
		}
	}
	for i := range spec.NodeMonitors {
		name := fmt.Sprintf("ex%d", i)
		args := []string{"executor", "--app", "sleep", "--node", fmt.Sprintf("nm%d", i),
			"--listen", f.Addr(2, i, 20101), "--node-monitor", f.Addr(2, i, 20501),
			"--report-launch-time", "--log-level", spec.LogLevel}
		if err := f.start(Executor, name, "", args); err != nil {
			return nil, err
		}
	}
	if say != nil {
		say(fmt.Sprintf("started %d schedulers, %d node monitors and %d executors; waiting for the fleet to form",
			spec.Schedulers, spec.NodeMonitors, spec.NodeMonitors))
	}
	if err := waitReady(ctx, f.members, spec.NodeMonitors, "sleep", spec.ReadyTimeout); err != nil {
		return nil, err
	}
	ok = true
	return f, nil
}

func (f *Fleet) start(role Role, name, http string, args []string) error {
	m, err := start(f.spec.Binary, f.spec.Dir, role, name, http, args)
	if err != nil {
		return err
	}
	f.members = append(f.members, m)
	return nil
}

// Schedulers returns the schedulers' SchedulerService addresses.
func (f *Fleet) Schedulers() []string { return append([]string(nil), f.scheds...) }

// Members describes every member, schedulers first, then node monitors,
// then executors.
func (f *Fleet) Members() []MemberInfo {
	out := make([]MemberInfo, len(f.members))
	for i, m := range f.members {
		out[i] = MemberInfo{Role: m.role, Name: m.name, PID: m.cmd.Process.Pid, HTTP: m.http, Log: m.log.Name()}
	}
	return out
}

// Alive reports an error naming the first member that has exited.
func (f *Fleet) Alive() error {
	for _, m := range f.members {
		if err := m.alive(); err != nil {
			return err
		}
	}
	return nil
}

// Status fetches member i's /status (i indexes Members).
func (f *Fleet) Status(ctx context.Context, i int) (httpapi.Status, error) {
	m := f.members[i]
	if m.http == "" {
		return httpapi.Status{}, fmt.Errorf("%s serves no operator endpoint", m.name)
	}
	return m.status(ctx)
}

// Stop stops every member, executors first, then node monitors, then
// schedulers, so that each leaves the gossip cleanly; each gets 10 s
// after SIGTERM before it is killed.
func (f *Fleet) Stop() {
	for i := len(f.members) - 1; i >= 0; i-- {
		f.members[i].stop(10 * time.Second)
	}
}
