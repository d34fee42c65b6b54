package procs

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of utime and stime in /proc/PID/stat.
// Linux fixes it at 100 on every architecture Go supports.
const clockTicks = 100

// Usage is one process's resource use as /proc reports it.
type Usage struct {
	// CPU is user plus system time of every thread, live or exited.
	CPU time.Duration
	// RSS and PeakRSS are the resident set now and its high-water mark.
	RSS, PeakRSS int64
	// Reads and Writes count the read and write system calls the process
	// has made (syscr and syscw of /proc/PID/io, failed ones included):
	// every framed Thrift message sent is one write, every poll of a
	// socket one read. UDP gossip (sendto, recvfrom) is not in them. Zero
	// where the kernel keeps no I/O accounting.
	Reads, Writes int64
}

// ReadUsage reads a live process's CPU time and memory from /proc.
func ReadUsage(pid int) (Usage, error) {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("read cpu time of pid %d: %w", pid, err)
	}
	cpu, err := parseStatCPU(stat)
	if err != nil {
		return Usage{}, fmt.Errorf("pid %d: %w", pid, err)
	}
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Usage{}, fmt.Errorf("read memory of pid %d: %w", pid, err)
	}
	u := Usage{CPU: cpu}
	u.RSS, _ = statusKB(status, "VmRSS:")
	u.PeakRSS, _ = statusKB(status, "VmHWM:")
	if io, err := os.ReadFile(fmt.Sprintf("/proc/%d/io", pid)); err == nil {
		u.Reads, _ = ioCount(io, "syscr:")
		u.Writes, _ = ioCount(io, "syscw:")
	}
	return u, nil
}

// parseStatCPU returns utime+stime from the text of /proc/PID/stat. The
// command name (field 2) may hold spaces and parentheses, so fields are
// counted from the last ')'.
func parseStatCPU(stat []byte) (time.Duration, error) {
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc stat: no ')' after the command name")
	}
	f := strings.Fields(string(stat[i+1:]))
	// After the name: state is field 3, utime field 14, stime field 15.
	const utime, stime = 14 - 3, 15 - 3
	if len(f) <= stime {
		return 0, fmt.Errorf("/proc stat: %d fields after the command name, want more than %d", len(f), stime)
	}
	u, err1 := strconv.ParseInt(f[utime], 10, 64)
	s, err2 := strconv.ParseInt(f[stime], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, fmt.Errorf("/proc stat: utime %q or stime %q is not a number", f[utime], f[stime])
	}
	return time.Duration(u+s) * time.Second / clockTicks, nil
}

// statusKB reads a "Key:   123 kB" line of /proc/PID/status, in bytes.
func statusKB(status []byte, key string) (int64, bool) {
	for _, line := range strings.Split(string(status), "\n") {
		rest, ok := strings.CutPrefix(line, key)
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) == 0 {
			return 0, false
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		return kb * 1024, err == nil
	}
	return 0, false
}

// ioCount reads a "key: 123" line of /proc/PID/io.
func ioCount(io []byte, key string) (int64, bool) {
	for _, line := range strings.Split(string(io), "\n") {
		if rest, ok := strings.CutPrefix(line, key); ok {
			v, err := strconv.ParseInt(strings.TrimSpace(rest), 10, 64)
			return v, err == nil
		}
	}
	return 0, false
}
