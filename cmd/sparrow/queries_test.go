package main

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/sparrowfleet/sparrow/internal/promql"
	"github.com/sparrowfleet/sparrow/internal/refdocs"
)

// The files whose PromQL must name only metrics the daemons export, from
// this package.
const (
	grafanaDashboard = "../../deploy/grafana/sparrowfleet.json"
	operationsDoc    = "../../docs/operations.md"
)

// TestQueriesNameExportedMetrics reads every PromQL expression of the
// Grafana dashboard and of the alerts in the operations guide, and fails
// for each metric one names that no daemon exports (the registry the
// metrics reference is generated from; a histogram's _bucket, _sum and
// _count count as its own).
func TestQueriesNameExportedMetrics(t *testing.T) {
	exported, err := refdocs.SeriesNames(docCollectors())
	if err != nil {
		t.Fatal(err)
	}
	queries := map[string][]string{} // source -> expressions
	dash, err := os.ReadFile(grafanaDashboard)
	if err != nil {
		t.Fatal(err)
	}
	var model any
	if err := json.Unmarshal(dash, &model); err != nil {
		t.Fatalf("%s: %v", grafanaDashboard, err)
	}
	queries[grafanaDashboard] = dashboardExprs(model)
	if len(queries[grafanaDashboard]) < 10 {
		t.Fatalf("%s has %d expressions; the walk over its panels is broken", grafanaDashboard, len(queries[grafanaDashboard]))
	}
	ops, err := os.ReadFile(operationsDoc)
	if err != nil {
		t.Fatal(err)
	}
	queries[operationsDoc] = alertExprs(string(ops))
	if len(queries[operationsDoc]) < 5 {
		t.Fatalf("%s has %d alert expressions (expr: lines in its Alerts section)", operationsDoc, len(queries[operationsDoc]))
	}
	for src, exprs := range queries {
		for _, expr := range exprs {
			names := promql.MetricNames(expr)
			if len(names) == 0 {
				t.Errorf("%s: %q names no metric", src, expr)
			}
			for _, n := range names {
				if !exported[n] {
					t.Errorf("%s: %q names %s, which no daemon exports (docs/reference/metrics.md)", src, expr, n)
				}
			}
		}
	}
}

// dashboardExprs returns every "expr" string in a Grafana dashboard
// model, however deep (panels in collapsed rows included).
func dashboardExprs(v any) []string {
	var out []string
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if s, ok := x.(string); ok && k == "expr" {
				out = append(out, s)
				continue
			}
			out = append(out, dashboardExprs(x)...)
		}
	case []any:
		for _, x := range v {
			out = append(out, dashboardExprs(x)...)
		}
	}
	return out
}

// alertExprs returns the expressions of the "expr:" lines in the Alerts
// section (from its "## Alerts" heading to the next "## ") of a Markdown
// document.
func alertExprs(doc string) []string {
	_, section, ok := strings.Cut(doc, "\n## Alerts\n")
	if !ok {
		return nil
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	var out []string
	for _, line := range strings.Split(section, "\n") {
		if _, expr, ok := strings.Cut(line, "expr: "); ok {
			out = append(out, strings.Trim(strings.TrimSpace(expr), `'"`))
		}
	}
	return out
}
