// Package metrics is the plumbing that exposes a daemon's counters to
// Prometheus. A collector built with NewCollector reads one snapshot of
// the daemon's own Stats or State per scrape and emits every series from
// it, so the hot path pays nothing for metrics and the series of one
// scrape agree with each other. Each daemon declares its own series
// beside its Stats (scheduler/metrics.go, nodemonitor/metrics.go,
// coordinator/metrics.go); internal/httpapi serves them at /metrics on
// the daemons' --http-listen.
//
// It imports no daemon and holds no scheduling logic.
package metrics
