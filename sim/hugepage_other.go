//go:build !linux

package sim

import "unsafe"

// adviseHugePages is a no-op where the kernel has no transparent huge
// pages; see hugepage_linux.go.
func adviseHugePages(p unsafe.Pointer) {}
