package overload

import (
	"fmt"
	"strings"
	"time"
)

// Config is the benchmark: one fleet shape, offered each multiple of its
// capacity in turn, a fresh fleet per multiple.
type Config struct {
	// Binary is the sparrow binary every member and the driver run.
	Binary string
	// Schedulers, NodeMonitors and Slots (per node monitor) shape the
	// fleet; each node monitor has one sleep executor beside it.
	Schedulers, NodeMonitors, Slots int
	// Jobs have Tasks tasks that each sleep TaskDuration, so the fleet's
	// capacity is NodeMonitors × Slots / TaskDuration tasks per second.
	Tasks        int
	TaskDuration time.Duration
	// Multiples are the offered loads, as multiples of capacity.
	Multiples []float64
	// Duration is each point's length; the measured window is [Settle,
	// Duration] from the drive's start. The driver's deadline is Duration
	// + Drain, so that jobs accepted near the end can finish (their
	// response times count; the window does not).
	Duration, Settle, Drain time.Duration
	// MaxQueued is every node monitor's --max-queued: how many
	// reservations it queues before refusing them, which is how soon the
	// fleet saturates.
	MaxQueued int
	// SchedulerArgs, NodeMonitorArgs and DriverArgs are extra flags for
	// every scheduler, every node monitor and `sparrow drive`.
	SchedulerArgs, NodeMonitorArgs, DriverArgs []string
	// FrontendTimeout is the driver's --timeout (0: its default): its
	// scheduler failure detection, and how long a submit waits for one of
	// its connections to the scheduler before failing as busy.
	FrontendTimeout time.Duration
	// GossipProfile, Net (two octets: members on Net.r.i) and LogLevel
	// (the daemons' --log-level; memberlist reports failure declarations
	// at info) configure the members.
	GossipProfile, Net, LogLevel string
	// Dir receives a directory of logs and samples per point.
	Dir string
	// HeapProfiles serves Go's profiler on the daemons and saves a heap
	// profile of the first scheduler and the first node monitor at the
	// window's start and end into the point's directory.
	HeapProfiles bool
	// SampleEvery is the sampling interval of /proc and the endpoints.
	SampleEvery time.Duration
	// ReadyTimeout bounds the wait for each fleet to form.
	ReadyTimeout time.Duration
	// Say, if set, receives progress lines.
	Say func(string)
}

// Capacity is the fleet's task capacity in tasks per second.
func (c *Config) Capacity() float64 {
	if c.TaskDuration <= 0 {
		return 0
	}
	return float64(c.NodeMonitors*c.Slots) / c.TaskDuration.Seconds()
}

func (c *Config) validate() error {
	switch {
	case c.Binary == "":
		return fmt.Errorf("no sparrow binary")
	case c.Tasks < 1:
		return fmt.Errorf("tasks per job %d: want at least 1", c.Tasks)
	case c.TaskDuration <= 0:
		return fmt.Errorf("task duration %v: want more than 0 (capacity is slots ÷ task duration)", c.TaskDuration)
	case len(c.Multiples) == 0:
		return fmt.Errorf("no load multiples")
	case c.Settle < 0 || c.Duration <= c.Settle:
		return fmt.Errorf("duration %v and settle %v: want 0 ≤ settle < duration", c.Duration, c.Settle)
	case c.Drain < 0:
		return fmt.Errorf("drain %v: want at least 0", c.Drain)
	case c.MaxQueued < 1:
		return fmt.Errorf("max queued %d: want at least 1", c.MaxQueued)
	case c.SampleEvery <= 0:
		return fmt.Errorf("sample interval %v: want more than 0", c.SampleEvery)
	case len(strings.Split(c.Net, ".")) != 2:
		return fmt.Errorf("net %q: want two octets such as 127.62", c.Net)
	}
	for _, m := range c.Multiples {
		if m <= 0 {
			return fmt.Errorf("load multiple %g: want more than 0", m)
		}
	}
	return nil
}

func (c *Config) say(format string, args ...any) {
	if c.Say != nil {
		c.Say(fmt.Sprintf(format, args...))
	}
}
