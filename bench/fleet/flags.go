package fleet

import (
	"time"

	"github.com/spf13/pflag"
)

// RegisterFlags adds the flags that shape an in-process fleet and its
// workload to fs, with their defaults (`sparrow local`, `sparrow bench
// fleet`); Validate names them.
func (f *RunConfig) RegisterFlags(fs *pflag.FlagSet) {
	fs.IntVar(&f.Schedulers, "schedulers", 2, "schedulers in the fleet")
	fs.IntVar(&f.NodeMonitors, "nodes", 10, "node monitors in the fleet")
	fs.IntVar(&f.Slots, "slots", 4, "slots per node monitor")
	fs.IntVar(&f.Tasks, "tasks", 10, "tasks per job")
	fs.DurationVar(&f.TaskDuration, "task-duration", 100*time.Millisecond, "how long each sleep task runs (0: no-op tasks; then set --jobs-per-sec)")
	fs.Float64Var(&f.Load, "load", 0.8, "target fraction of slots busy; sets the Poisson job arrival rate")
	fs.Float64Var(&f.JobsPerSec, "jobs-per-sec", 0, "job arrival rate, overriding the one derived from --load")
	fs.DurationVar(&f.Duration, "duration", 20*time.Second, "how long jobs keep arriving")
	fs.DurationVar(&f.Drain, "drain", 30*time.Second, "longest wait for in-flight jobs after arrivals stop")
	fs.Float64Var(&f.ProbeRatio, "probe-ratio", 2, "probe ratio d")
	fs.StringVar(&f.Queue, "queue", "fifo", "node monitors' reservation queue discipline")
	fs.BoolVar(&f.NoCancel, "no-cancel", false, "do not cancel leftover reservations")
	fs.BoolVar(&f.SingleHost, "single-host", false, "put every member on 127.0.0.1 instead of its own 127.0.x.y address")
	fs.Uint64Var(&f.Seed, "seed", 1, "seed for arrivals and placement")
	fs.StringVar(&f.CPUProfile, "cpuprofile", "", "write a CPU profile of the run (fleet and driver) to this file")
	fs.StringVar(&f.GossipProfile, "gossip-profile", "local", "members' gossip timing: local (fast convergence and failure detection), lan (lighter, but slower to converge) or wan")
}
