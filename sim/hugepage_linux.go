package sim

import (
	"syscall"
	"unsafe"
)

// hugePageSize is the size of a transparent huge page on the platforms Go
// supports on Linux.
const hugePageSize = 2 << 20

// adviseHugePages asks the kernel to back the whole 2 MiB pages inside
// [p, p+size) with transparent huge pages. The simulator touches its node
// monitors at random among thousands: with 4 KiB pages nearly every touch
// misses the TLB, with 2 MiB pages a few entries cover them all. It is a
// hint only: an error (no THP support, THP disabled) changes nothing but
// speed, and results never depend on it.
func adviseHugePages(p unsafe.Pointer, size uintptr) {
	start := (uintptr(p) + hugePageSize - 1) &^ (hugePageSize - 1)
	end := (uintptr(p) + size) &^ (hugePageSize - 1)
	if end <= start {
		return
	}
	const madvHugePage = 14 // MADV_HUGEPAGE
	_ = syscall.Madvise(unsafe.Slice((*byte)(unsafe.Add(p, start-uintptr(p))), end-start), madvHugePage)
}
