//go:build !linux || !(amd64 || arm64)

package sim

import "unsafe"

// adviseHugePages is a no-op where the kernel has no transparent huge
// pages or the Go heap's arenas are not 64 MiB; see hugepage_linux64.go.
func adviseHugePages(p unsafe.Pointer) {}
