//go:build linux && (amd64 || arm64)

package sim

import (
	"syscall"
	"unsafe"
)

// heapArena is the span of address space that adviseHugePages covers: the
// Go heap grows in aligned arenas of this size on 64-bit Linux, and the
// engine's large tables (node monitors, jobs' requests, queue rings, the
// event queue) usually share one.
const heapArena = 64 << 20

// adviseHugePages asks the kernel to back the heap arena holding p, as far
// as it is mapped now, with transparent huge pages; memory the Go runtime
// maps later needs the advice again. The simulator touches its node
// monitors at random among thousands: with 4 KiB pages nearly every touch
// misses the TLB, and every page of fresh memory costs a page fault;
// with 2 MiB pages a few TLB entries cover the monitors and a fault brings
// in 512 pages at once. It is a hint only, by address, without making a
// Go pointer of the range: an error (no THP support, THP disabled, parts
// of the range not mapped) changes nothing but speed, and results never
// depend on it.
func adviseHugePages(p unsafe.Pointer) {
	start := uintptr(p) &^ (heapArena - 1)
	const madvHugePage = 14 // MADV_HUGEPAGE
	_, _, _ = syscall.Syscall(syscall.SYS_MADVISE, start, heapArena, madvHugePage)
}
