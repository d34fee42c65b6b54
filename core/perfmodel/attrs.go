package perfmodel

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// ProfileAttr is the node attribute that carries a machine's profile
// through gossip, so that a planner can see every live machine's speed.
// Node attributes travel in memberlist's 512-byte metadata, so the value
// is short: FormatProfile's "cores=8,ghz=2.6,read=140,write=100,net=119"
// is under 50 bytes, and exact values at most about 100.
const ProfileAttr = "perf"

// maxProfile bounds the attribute's length, so a hostile value cannot make
// parsing expensive.
const maxProfile = 256

// FormatProfile encodes m, name aside, as ProfileAttr's value: cores, clock
// in GHz, and the disk read, disk write and network rates in MB/s (MB =
// 2^20 bytes). An operator may write the same text by hand with
// `sparrow nodemonitor --attr perf=...`.
func FormatProfile(m Machine) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return fmt.Sprintf("cores=%d,ghz=%s,read=%s,write=%s,net=%s",
		m.Cores, f(m.GHz), f(m.DiskRead/MB), f(m.DiskWrite/MB), f(m.Net/MB))
}

// ParseProfile decodes ProfileAttr's value into the profile of the machine
// called name. Every field is required, each once; the error names the
// field that is missing, repeated, unknown or out of range.
func ParseProfile(name, s string) (Machine, error) {
	m := Machine{Name: name}
	if len(s) > maxProfile {
		return m, fmt.Errorf("machine %q: profile of %d bytes, want at most %d", name, len(s), maxProfile)
	}
	seen := map[string]bool{}
	for _, kv := range strings.Split(s, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(kv), "=")
		if !ok {
			return m, fmt.Errorf("machine %q: profile field %q: want key=value", name, kv)
		}
		if seen[k] {
			return m, fmt.Errorf("machine %q: profile field %q given twice", name, k)
		}
		seen[k] = true
		if k == "cores" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 || n > 1<<16 {
				return m, fmt.Errorf("machine %q: profile cores %q: want an integer from 1 to 65536", name, v)
			}
			m.Cores = n
			continue
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return m, fmt.Errorf("machine %q: profile %s %q: want a positive finite number", name, k, v)
		}
		switch k {
		case "ghz":
			m.GHz = x
		case "read":
			m.DiskRead = x * MB
		case "write":
			m.DiskWrite = x * MB
		case "net":
			m.Net = x * MB
		default:
			return m, fmt.Errorf("machine %q: unknown profile field %q (want cores, ghz, read, write, net)", name, k)
		}
	}
	for _, k := range []string{"cores", "ghz", "read", "write", "net"} {
		if !seen[k] {
			return m, fmt.Errorf("machine %q: profile lacks %q", name, k)
		}
	}
	return m, m.Validate()
}
