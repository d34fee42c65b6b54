//go:build !unix

package driver

// MarkSignals is a no-op where there is no SIGUSR1.
func MarkSignals() (marks <-chan struct{}, stop func()) { return nil, func() {} }
