package procs

import (
	"fmt"
	"os"
	"runtime"
	"strconv"

	"golang.org/x/sys/unix"
)

// Pinning a fleet to CPUs, for the scaling measurement: schedulers on
// one CPU, everything else on another, so that the schedulers' sustained
// rate is what one core of scheduler buys.

// pinFleet pins every scheduler to CPU 0, and every other member and this
// process (so the driver it starts later inherits it) to CPU 1.
func pinFleet(members []*member) error {
	if runtime.NumCPU() < 2 {
		return fmt.Errorf("--pin needs 2 CPUs, this machine has %d", runtime.NumCPU())
	}
	for _, m := range members {
		cpu := 1
		if m.role == Scheduler {
			cpu = 0
		}
		if err := pinProcess(m.cmd.Process.Pid, cpu); err != nil {
			return fmt.Errorf("pin %s: %w", m.name, err)
		}
	}
	if err := pinProcess(os.Getpid(), 1); err != nil {
		return fmt.Errorf("pin the benchmark itself: %w", err)
	}
	return nil
}

// pinProcess sets the CPU affinity of every thread of pid to cpu. Threads
// created meanwhile inherit their creator's mask, so a second pass
// catches any made from a thread not yet pinned.
func pinProcess(pid, cpu int) error {
	var set unix.CPUSet
	set.Set(cpu)
	for range 2 {
		tasks, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
		if err != nil {
			return err
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("thread %d: %w", tid, err)
			}
		}
	}
	return nil
}
