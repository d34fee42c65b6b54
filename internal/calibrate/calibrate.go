package calibrate

import (
	"fmt"
	"os"
	"runtime"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
)

// Options shape a calibration.
type Options struct {
	// Dir holds the temporary file of the disk test ("": os.TempDir()).
	Dir string
	// DiskBytes is the temporary file's size (0: 64 MiB).
	DiskBytes int
	// Loop is how many iterations the CPU loop runs (0: 2e8, about a
	// tenth of a second at 2 GHz).
	Loop int
	// Net is the network rate to report, in bytes/s: it cannot be
	// measured without a peer (0: 1 Gbit/s).
	Net float64
}

func (o *Options) defaults() {
	if o.Dir == "" {
		o.Dir = os.TempDir()
	}
	if o.DiskBytes <= 0 {
		o.DiskBytes = 64 << 20
	}
	if o.Loop <= 0 {
		o.Loop = 2e8
	}
	if o.Net <= 0 {
		o.Net = 1e9 / 8
	}
}

// Measure calibrates this machine and returns its profile, named name.
func Measure(name string, o Options) (perfmodel.Machine, error) {
	o.defaults()
	m := perfmodel.Machine{Name: name, Cores: runtime.GOMAXPROCS(0), Net: o.Net}
	m.GHz = Clock(o.Loop)
	w, r, err := Disk(o.Dir, o.DiskBytes)
	if err != nil {
		return m, err
	}
	m.DiskWrite, m.DiskRead = w, r
	if err := m.Validate(); err != nil {
		return m, fmt.Errorf("calibration gave an unusable profile: %w", err)
	}
	return m, nil
}

// Clock returns an equivalent clock rate in GHz: iterations per nanosecond
// of a loop whose body is one dependent chain of cycleOps single-cycle
// integer operations, so that on a core that retires one dependent integer
// operation per cycle (most do) it reads the clock the loop ran at.
func Clock(iterations int) float64 {
	start := time.Now()
	x := spin(uint64(iterations))
	elapsed := time.Since(start)
	sink = x // keep the loop from being optimised away
	if elapsed <= 0 {
		elapsed = time.Nanosecond
	}
	return float64(iterations) * cycleOps / float64(elapsed.Nanoseconds())
}

// cycleOps is the dependent operations per iteration of spin.
const cycleOps = 4

var sink uint64

// spin runs n iterations of a dependent chain: add, xor, rotate (one
// instruction on amd64 and arm64) and add; each waits for the one before.
//
//go:noinline
func spin(n uint64) uint64 {
	x := n
	for i := uint64(0); i < n; i++ {
		x += i
		x ^= 0x9e3779b97f4a7c15
		x = x<<13 | x>>51
		x += 7
	}
	return x
}

// Disk writes a temporary file of size bytes in dir, syncs it, asks the
// kernel to drop it from the page cache, reads it back, and returns the
// write and read rates in bytes/s. Where the kernel keeps the pages anyway,
// the read rate is the cache's, which the error does not flag: the rates
// are rough by nature.
func Disk(dir string, size int) (write, read float64, err error) {
	f, err := os.CreateTemp(dir, "sparrow-calibrate-*")
	if err != nil {
		return 0, 0, fmt.Errorf("disk calibration: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	// O_DIRECT reads need a buffer aligned to the block size.
	raw := make([]byte, 1<<20+align)
	off := align - int(uintptr(unsafe.Pointer(&raw[0]))%align)
	buf := raw[off%align : off%align+1<<20]
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	start := time.Now()
	for done := 0; done < size; done += len(buf) {
		if _, err := f.Write(buf[:min(len(buf), size-done)]); err != nil {
			return 0, 0, fmt.Errorf("disk calibration: write %s: %w", f.Name(), err)
		}
	}
	if err := f.Sync(); err != nil {
		return 0, 0, fmt.Errorf("disk calibration: sync %s: %w", f.Name(), err)
	}
	write = rate(size, time.Since(start))
	// Best effort: not every file system honours the advice, so the read
	// below goes around the page cache with O_DIRECT where it can.
	_ = unix.Fadvise(int(f.Fd()), 0, int64(size), unix.FADV_DONTNEED)
	r, err := openUncached(f.Name())
	if err != nil {
		return 0, 0, err
	}
	defer r.Close()
	start = time.Now()
	got := 0
	for {
		n, err := r.Read(buf)
		got += n
		if n == 0 || err != nil {
			break
		}
	}
	if got != size {
		return 0, 0, fmt.Errorf("disk calibration: read %d of the %d bytes written to %s", got, size, f.Name())
	}
	return write, rate(size, time.Since(start)), nil
}

// openUncached opens name for reading with O_DIRECT, or plainly where the
// file system refuses it (tmpfs does): then the read rate is the page
// cache's.
func openUncached(name string) (*os.File, error) {
	if r, err := os.OpenFile(name, os.O_RDONLY|unix.O_DIRECT, 0); err == nil {
		return r, nil
	}
	r, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("disk calibration: reopen %s: %w", name, err)
	}
	return r, nil
}

// align is the O_DIRECT buffer alignment; 4 KiB covers common disks.
const align = 4096

func rate(bytes int, d time.Duration) float64 {
	if d <= 0 {
		d = time.Nanosecond
	}
	return float64(bytes) / d.Seconds()
}
