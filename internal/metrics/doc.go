// Package metrics exposes the daemons' counters to Prometheus. Collectors
// read each daemon's own Stats/State snapshot at scrape time, so the hot
// path pays nothing for metrics. internal/httpapi serves them at /metrics
// on the daemons' --http-listen.
//
// It is plumbing: only this module may import it, and it holds no scheduling
// logic (that lives in core/).
package metrics
