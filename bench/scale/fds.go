package scale

import (
	"fmt"
	"syscall"
)

// fdsPerNodeMonitor is about how many file descriptors one node monitor
// of the harness holds in this process at its busiest: its listeners
// (gossip, two Thrift services, HTTP, one executor per app), the
// connections each executor and the node monitor hold open to each
// other for liveness, and pooled connections to and from the schedulers
// and frontends. Both ends of each connection are in this process. It is
// measured with three schedulers and three apps (58 at 40 node monitors
// during the drive) and rounded up.
const fdsPerNodeMonitor = 60

// fdsFixed covers the schedulers, the frontends, the status observer and
// the process itself.
const fdsFixed = 500

// checkFileLimit returns an error naming what to do when a fleet of n node
// monitors would run out of file descriptors, which would otherwise show
// as members failing to accept or dial midway through the sweep.
func checkFileLimit(n int) error {
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return nil // no way to tell; the run will show it
	}
	need := uint64(n*fdsPerNodeMonitor + fdsFixed)
	if lim.Cur >= need {
		return nil
	}
	return fmt.Errorf("%d node monitors in one process need about %d file descriptors (%d each), but the limit is %d (hard limit %d): raise it (ulimit -n) or measure fewer node monitors",
		n, need, fdsPerNodeMonitor, lim.Cur, lim.Max)
}
