// Package metricstest reads a collector's series in tests.
package metricstest

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Values gathers c (Gather) and returns each series'
// value keyed by its name followed by its label values, each in braces,
// in the order of their label names sorted: name{v1}{v2}. A histogram's
// value is its count.
func Values(t testing.TB, c prometheus.Collector) map[string]float64 {
	t.Helper()
	got := map[string]float64{}
	for _, mf := range Gather(t, c) {
		for _, m := range mf.GetMetric() {
			key := mf.GetName()
			for _, l := range m.GetLabel() {
				key += "{" + l.GetValue() + "}"
			}
			got[key] = m.GetGauge().GetValue() + m.GetCounter().GetValue() + float64(m.GetHistogram().GetSampleCount())
		}
	}
	return got
}

// Gather gathers c through a pedantic registry, which fails t unless
// every series is described and consistent.
func Gather(t testing.TB, c prometheus.Collector) []*dto.MetricFamily {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	if err := reg.Register(c); err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return mfs
}
