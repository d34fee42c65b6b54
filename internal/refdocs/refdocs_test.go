package refdocs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/spf13/cobra"
)

// TestDescFields: a descriptor's String is parsed into its name, help
// and label names, and a malformed one is an error.
func TestDescFields(t *testing.T) {
	for _, tc := range []struct {
		in, name, help, labels string
		bad                    bool
	}{
		{in: `Desc{fqName: "a_total", help: "Things | \"quoted\".", unit: "", constLabels: {}, variableLabels: {}}`, name: "a_total", help: `Things | "quoted".`},
		{in: `Desc{fqName: "b", help: "h", unit: "", constLabels: {}, variableLabels: {cause,c(level)}}`, name: "b", help: "h", labels: "`cause`, `level`"},
		{in: `Desc{fqName: "c", unit: ""}`, bad: true},
		{in: `Desc{fqName: "c, help: "h"}`, bad: true},
	} {
		name, help, labels, err := descFieldsOf(tc.in)
		if tc.bad != (err != nil) {
			t.Errorf("%s: err %v", tc.in, err)
			continue
		}
		if !tc.bad && (name != tc.name || help != tc.help || labels != tc.labels) {
			t.Errorf("%s: got %q %q %q", tc.in, name, help, labels)
		}
	}
}

// quiet describes two metrics and collects one of them.
type quiet struct{ a, b *prometheus.Desc }

func (q quiet) Describe(ch chan<- *prometheus.Desc) { ch <- q.a; ch <- q.b }
func (q quiet) Collect(ch chan<- prometheus.Metric) {
	ch <- prometheus.MustNewConstMetric(q.a, prometheus.CounterValue, 1, "x")
}

// TestMetrics: each collector's metrics are listed by name under its
// prefix, with the type collected while idle, the labels and the help
// (its pipe escaped); one described but not collected is still listed.
func TestMetrics(t *testing.T) {
	q := quiet{
		a: prometheus.NewDesc("demo_widgets_total", "Widgets | made.", []string{"kind"}, nil),
		b: prometheus.NewDesc("demo_backlog", "Backlog.", nil, nil),
	}
	b, err := Metrics([]Collector{{ServedBy: "demo", Collector: q}})
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	for _, w := range []string{
		Header,
		"## `demo_*`\n\nServed by: demo.",
		"| `demo_backlog` | not reported while idle |  | Backlog. |\n| `demo_widgets_total` | counter | `kind` | Widgets \\| made. |",
	} {
		if !strings.Contains(got, w) {
			t.Errorf("missing %q in\n%s", w, got)
		}
	}
	if _, err := Metrics([]Collector{{ServedBy: "a", Collector: q}, {ServedBy: "b", Collector: q}}); err == nil {
		t.Error("two collectors with one prefix accepted")
	}
}

// TestWrite: the cli folder is replaced (a page of a removed command goes),
// other files are written beside it.
func TestWrite(t *testing.T) {
	dir := t.TempDir()
	if err := Write(dir, map[string][]byte{"cli/old.md": []byte("old")}); err != nil {
		t.Fatal(err)
	}
	if err := Write(dir, map[string][]byte{"cli/new.md": []byte("new"), "metrics.md": []byte("m")}); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cli", "old.md")); !os.IsNotExist(err) {
		t.Errorf("old page kept: %v", err)
	}
	for name, want := range map[string]string{"cli/new.md": "new", "metrics.md": "m"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || string(b) != want {
			t.Errorf("%s: %q %v", name, b, err)
		}
	}
}

// TestReference: the CLI pages of the root's visible commands and the
// metrics page, keyed by their paths in the reference directory.
func TestReference(t *testing.T) {
	root := &cobra.Command{Use: "demo", Short: "A demo."}
	root.AddCommand(&cobra.Command{Use: "run", Short: "Run it.", Run: func(*cobra.Command, []string) {}},
		&cobra.Command{Use: "secret", Hidden: true, Run: func(*cobra.Command, []string) {}})
	q := quiet{a: prometheus.NewDesc("demo_runs_total", "Runs.", []string{"kind"}, nil), b: prometheus.NewDesc("demo_up", "Up.", nil, nil)}
	files, err := Reference(root, []Collector{{ServedBy: "demo", Collector: q}})
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"cli/demo.md", "cli/demo_run.md", "metrics.md"} {
		if len(files[name]) == 0 {
			t.Errorf("no %s in %d files", name, len(files))
		}
	}
	if _, ok := files["cli/demo_secret.md"]; ok {
		t.Error("the hidden command is documented")
	}
	if !strings.Contains(string(files["metrics.md"]), "`demo_runs_total`") {
		t.Errorf("metrics.md lacks the collector's metric:\n%s", files["metrics.md"])
	}
}

// TestSeriesNames: a histogram may be selected by its _bucket, _sum and
// _count series, a counter or gauge only by its name.
func TestSeriesNames(t *testing.T) {
	h := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h_seconds", Help: "h"})
	c := prometheus.NewCounter(prometheus.CounterOpts{Name: "c_total", Help: "c"})
	names, err := SeriesNames([]Collector{{ServedBy: "x", Collector: h}, {ServedBy: "y", Collector: c}})
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]bool{
		"h_seconds": true, "h_seconds_bucket": true, "h_seconds_sum": true, "h_seconds_count": true,
		"c_total": true, "c_total_bucket": false, "c_total_sum": false, "other": false,
	} {
		if names[name] != want {
			t.Errorf("%s selectable: %v, want %v", name, names[name], want)
		}
	}
}
