package procs

import "syscall"

// syscallRusage is what os.ProcessState.SysUsage holds on Unix.
type syscallRusage = syscall.Rusage
