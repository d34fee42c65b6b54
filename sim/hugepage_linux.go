package sim

import (
	"syscall"
	"unsafe"
)

// hugePageSize is the size of a transparent huge page on the platforms Go
// supports on Linux.
const hugePageSize = 2 << 20

// heapArena is the span of address space around the node monitors that
// adviseHugePages covers: the Go heap grows in aligned arenas of this size
// (64 MiB on 64-bit Linux), and the engine's other large tables (jobs'
// requests, queue rings, the event heap) are allocated in the same arena.
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
