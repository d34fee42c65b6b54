package promql

import (
	"regexp"
	"slices"
	"testing"
)

func TestMetricNames(t *testing.T) {
	for _, tc := range []struct {
		expr string
		want []string
	}{
		{`rate(sparrow_scheduler_tasks_launched_total[1m])`, []string{"sparrow_scheduler_tasks_launched_total"}},
		{`histogram_quantile(0.99, sum by (le) (rate(sparrow_scheduler_scheduling_delay_seconds_bucket{job="sched", instance=~"$instance"}[$__rate_interval])))`,
			[]string{"sparrow_scheduler_scheduling_delay_seconds_bucket"}},
		{`sum(rate(a_total[5m])) by (le, role) / ignoring(reason) group_left sum without (x) (b)`, []string{"a_total", "b"}},
		{`count by (version) (sparrow_build_info) > bool 1 and on() vector(1) or absent(up)`, []string{"sparrow_build_info", "up"}},
		{`count_values("version", sparrow_build_info{role="scheduler"})`, []string{"sparrow_build_info"}},
		{`x offset 5m + y @ start() - 1e3 * 0x1f + .5 + Inf - nan`, []string{"x", "y"}},
		{`max_over_time(a[1h:1m]) unless topk(3, b) # comment naming c`, []string{"a", "b"}},
		{`label_replace(a, "dst", "$1", "src", "(.*)") + ${var:csv} + $var + ${ds}`, []string{"a"}},
		{`quantile(0.5, a) + limitk(2, b) + atan2 c`, []string{"a", "b", "c"}},
		{`{__name__="ignored"} + a:recorded:rate5m`, []string{"a:recorded:rate5m"}},
		{`a + a`, []string{"a"}},
		{``, nil},
		{`sum by (`, nil},
		{`"unterminated`, nil},
	} {
		if got := MetricNames(tc.expr); !slices.Equal(got, tc.want) {
			t.Errorf("MetricNames(%q) = %q, want %q", tc.expr, got, tc.want)
		}
	}
}

var metricName = regexp.MustCompile(`^[a-zA-Z_:][a-zA-Z0-9_:]*$`)

// FuzzMetricNames: any input gives sorted, distinct metric names, none of
// them a keyword; and a metric appended to any input with an operator
// is found.
func FuzzMetricNames(f *testing.F) {
	for _, s := range []string{
		`rate(a[5m])`, `sum by (le) (b{x="}"})`, `"\"`, "`", `{[(`, `$`, `${`, `1h30m`, `a offset -5m`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		got := MetricNames(expr)
		if !slices.IsSorted(got) || len(slices.Compact(slices.Clone(got))) != len(got) {
			t.Fatalf("names %q are not sorted and distinct", got)
		}
		for _, n := range got {
			if !metricName.MatchString(n) || nonMetrics[n] {
				t.Fatalf("%q is not a metric name", n)
			}
		}
		// What follows an unclosed string or group is inside it, so the
		// appended metric is looked for only after a balanced expr.
		if balanced(expr) {
			if names := MetricNames(expr + "\n + zz_fuzz_metric"); !slices.Contains(names, "zz_fuzz_metric") {
				t.Fatalf("metric appended to %q not found: %q", expr, names)
			}
		}
	})
}

// balanced reports whether expr has no unclosed string, group or comment
// that would swallow what follows it.
func balanced(expr string) bool {
	var stack []byte
	for i := 0; i < len(expr); i++ {
		c := expr[i]
		switch c {
		case '"', '\'', '`':
			j := i + 1
			for ; j < len(expr) && expr[j] != c; j++ {
				if expr[j] == '\\' && c != '`' {
					j++
				}
			}
			if j >= len(expr) {
				return false
			}
			i = j
		case '{', '[', '(':
			stack = append(stack, c)
		case '}', ']', ')':
			if len(stack) == 0 || stack[len(stack)-1] != map[byte]byte{'}': '{', ']': '[', ')': '('}[c] {
				return false
			}
			stack = stack[:len(stack)-1]
		case '$':
			return false // a variable's braces are read apart
		case '#':
			for i < len(expr) && expr[i] != '\n' {
				i++
			}
		}
	}
	return len(stack) == 0
}
