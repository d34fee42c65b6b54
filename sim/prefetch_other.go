//go:build !amd64

package sim

// prefetch is a no-op where the engine has no prefetch instruction; see
// prefetch_amd64.go.
func prefetch(p, lines uintptr) {}

// prefetch2 is a no-op too (see prefetch_amd64.go).
func prefetch2(a, b uintptr) {}
