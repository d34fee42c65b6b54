package perfmodel

import (
	"errors"
	"fmt"
	"math"
)

// MB is the megabyte of the report's disk rates: its 1 GB Select input
// read at 140 MB/s takes 7.3 s (Figure 7), which fits 2^20-byte megabytes.
const MB = 1 << 20

// Machine is a machine's performance profile, all a prediction needs.
type Machine struct {
	// Name identifies the machine in plans and error messages.
	Name string `json:"name"`
	// Cores is the number of processors a task may use at once.
	Cores int `json:"cores"`
	// GHz is the clock rate; CPU work scales linearly with it.
	GHz float64 `json:"ghz"`
	// DiskRead and DiskWrite are the local disk's sequential rates, bytes/s.
	DiskRead  float64 `json:"disk_read"`
	DiskWrite float64 `json:"disk_write"`
	// Net is the network interface rate in bytes/s, in each direction.
	Net float64 `json:"net"`
}

// Validate reports the first field that cannot describe a machine.
func (m Machine) Validate() error {
	bad := func(v float64) bool { return !(v > 0) || math.IsInf(v, 0) }
	switch {
	case m.Cores < 1:
		return fmt.Errorf("machine %q: cores %d, want at least 1", m.Name, m.Cores)
	case bad(m.GHz):
		return fmt.Errorf("machine %q: clock %v GHz, want a positive finite number", m.Name, m.GHz)
	case bad(m.DiskRead), bad(m.DiskWrite):
		return fmt.Errorf("machine %q: disk rates %v/%v B/s, want positive finite numbers", m.Name, m.DiskRead, m.DiskWrite)
	case bad(m.Net):
		return fmt.Errorf("machine %q: network rate %v B/s, want a positive finite number", m.Name, m.Net)
	}
	return nil
}

// Same reports whether two machines have identical profiles (names aside),
// so that swapping them cannot change any prediction.
func (m Machine) Same(o Machine) bool {
	return m.Cores == o.Cores && m.GHz == o.GHz && m.DiskRead == o.DiskRead &&
		m.DiskWrite == o.DiskWrite && m.Net == o.Net
}

// ErrNoMachines is returned when a prediction is asked of an empty cluster.
var ErrNoMachines = errors.New("no machines")
