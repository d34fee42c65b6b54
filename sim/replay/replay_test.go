package replay

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
)

const googSlice = "../../internal/jobtrace/testdata/goog_slice.tr"

// options are a replay of file with sparrow sim's flag defaults (on two
// goroutines), edited by edit; the flags named in given count as set by
// the user.
func options(file string, edit func(*Options), given ...string) *Options {
	o := &Options{}
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	o.AddFlags(fs)
	o.Spec.AddFlags(fs)
	o.File, o.Spec.Parallel = file, 2
	edit(o)
	o.Spec.Given = func(flag string) bool { return slices.Contains(given, flag) }
	return o
}

func run(o *Options) (stdout, stderr string, err error) {
	var out, progress bytes.Buffer
	err = o.Run(&out, &progress)
	return out.String(), progress.String(), err
}

func TestSimJobTraceJSON(t *testing.T) {
	svg := filepath.Join(t.TempDir(), "cdf.svg")
	out, errOut, err := run(options(googSlice, func(o *Options) {
		o.Spec.Nodes, o.Cutoff, o.ShortShare, o.Spec.Loads, o.JSON, o.Plot = 400, 1129.532, 0.17, "0.9", true, svg
	}, "load"))
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d JSON lines, want one per policy:\n%s", len(lines), out)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var row map[string]any
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatalf("%v: %s", err, l)
		}
		seen[row["policy"].(string)] = true
		for _, class := range []string{"short", "long"} {
			c, ok := row[class].(map[string]any)
			if !ok {
				t.Fatalf("row lacks %q: %s", class, l)
			}
			for _, k := range []string{"n", "mean", "p50", "p90", "p99"} {
				if _, ok := c[k]; !ok {
					t.Errorf("%s lacks %q", class, k)
				}
			}
		}
		if row["load"] != 0.9 || row["trace_load"].(float64) <= 0 {
			t.Errorf("loads: %v %v", row["load"], row["trace_load"])
		}
	}
	if !seen["ideal"] || !seen["central"] || !seen["sparrow"] || !seen["aware"] {
		t.Errorf("policies %v", seen)
	}
	for _, p := range []string{svg, filepath.Join(filepath.Dir(svg), "cdf-long.svg")} {
		if b, err := os.ReadFile(p); err != nil || !strings.Contains(string(b), "<svg") {
			t.Errorf("plot %s: %v", p, err)
		}
	}
}

func TestSimJobTraceTableAndErrors(t *testing.T) {
	out, errOut, err := run(options(googSlice, func(o *Options) { o.Spec.Nodes, o.Spec.Policies, o.TimeScale = 300, "sparrow,ideal,bound", 10 }))
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	for _, want := range []string{"p99/ideal", "sparrow", "bound", "short", "long", "time scale 10"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
	bad := filepath.Join(t.TempDir(), "bad.tr")
	if err := os.WriteFile(bad, []byte("1 2 1.5 1 2\n2 2 1 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args string
		o    *Options
		want string
	}{
		{"--job-trace bad.tr", options(bad, func(*Options) {}), "bad.tr:2: field d_2"},
		{"--tasks 5", options(googSlice, func(*Options) {}, "tasks"), "--tasks does not apply"},
		{"--policy late", options(googSlice, func(o *Options) { o.Spec.Policies = "late" }), "unknown trace policy"},
		{"--time-scale 0", options(googSlice, func(o *Options) { o.TimeScale = 0 }), "--time-scale"},
		{"--share-hold 1h", options(googSlice, func(o *Options) { o.ShareHold = time.Hour }, "share-hold"), "--share-hold needs --adaptive-share"},
		{"--adaptive-share --share-hold -1s", options(googSlice, func(o *Options) { o.AdaptiveShare, o.ShareHold = true, -time.Second }, "share-hold"), "adaptive share hold must be >= 0"},
		{"--job-trace none.tr", options(filepath.Join(t.TempDir(), "none.tr"), func(*Options) {}), "no such file"},
	} {
		_, _, err := run(tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q", tc.args, err, tc.want)
		}
	}
}

// The time scale divides durations and arrival gaps alike, so the trace's
// own load, reported and used to reach --load, is the same at any scale.
func TestTimeScaleKeepsTheLoad(t *testing.T) {
	loads := map[float64]float64{}
	for _, scale := range []float64{1, 10} {
		out, errOut, err := run(options(googSlice, func(o *Options) {
			o.Spec.Nodes, o.Spec.Policies, o.TimeScale, o.JSON = 300, "ideal", scale, true
		}))
		if err != nil {
			t.Fatalf("scale %v: %v\n%s", scale, err, errOut)
		}
		var row struct {
			Load      float64 `json:"load"`
			TraceLoad float64 `json:"trace_load"`
		}
		if err := json.Unmarshal([]byte(strings.TrimSpace(out)), &row); err != nil {
			t.Fatalf("scale %v: %v: %s", scale, err, out)
		}
		if row.Load != row.TraceLoad {
			t.Errorf("scale %v: load %v, want the trace's own %v (no --load)", scale, row.Load, row.TraceLoad)
		}
		loads[scale] = row.TraceLoad
	}
	if loads[1] <= 0 || loads[1] != loads[10] {
		t.Fatalf("trace load %v at scale 1, %v at scale 10: want the same, > 0", loads[1], loads[10])
	}
}

// --jobs-out writes one row per job and run, in the trace's order, whose
// responses average to the summary's means.
func TestSimJobsOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.csv")
	out, errOut, err := run(options(googSlice, func(o *Options) {
		o.Spec.Nodes, o.Cutoff, o.Spec.Policies, o.JSON, o.JobsOut = 300, 1129.532, "sparrow,aware", true, path
	}))
	if err != nil {
		t.Fatalf("%v\n%s", err, errOut)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) < 2 || !slices.Equal(rows[0], []string{"run", "job", "class", "mean_task_s", "arrival_s", "response_s"}) {
		t.Fatalf("CSV header %v", rows[:min(len(rows), 1)])
	}
	type acc struct {
		n    [2]int
		sum  [2]float64
		next int
	}
	runs := map[string]*acc{}
	for _, r := range rows[1:] {
		a := runs[r[0]]
		if a == nil {
			a = &acc{}
			runs[r[0]] = a
		}
		job, err1 := strconv.Atoi(r[1])
		resp, err2 := strconv.ParseFloat(r[5], 64)
		if err1 != nil || err2 != nil || job != a.next || (r[2] != "short" && r[2] != "long") {
			t.Fatalf("row %v: want job %d of run %s, a class and a response", r, a.next, r[0])
		}
		a.next++
		c := 0
		if r[2] == "long" {
			c = 1
		}
		a.n[c]++
		a.sum[c] += resp
	}
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var row struct {
			Policy      string
			Short, Long struct {
				N    int
				Mean float64
			}
		}
		if err := json.Unmarshal([]byte(l), &row); err != nil {
			t.Fatal(err)
		}
		a := runs[row.Policy]
		if a == nil {
			t.Fatalf("no rows for run %q in %v", row.Policy, slices.Collect(maps.Keys(runs)))
		}
		for c, s := range []struct {
			N    int
			Mean float64
		}{row.Short, row.Long} {
			if a.n[c] != s.N || math.Abs(a.sum[c]/float64(max(a.n[c], 1))-s.Mean) > 1e-6 {
				t.Errorf("%s class %d: %d rows averaging %v, summary %d averaging %v", row.Policy, c, a.n[c], a.sum[c]/float64(max(a.n[c], 1)), s.N, s.Mean)
			}
		}
	}
	if len(runs) != 2 {
		t.Errorf("runs %v, want sparrow and aware", slices.Collect(maps.Keys(runs)))
	}
}

// The replay's flags other than --job-trace are refused without it, and
// the list that says so names every one of them.
func TestCheckUnused(t *testing.T) {
	fs := pflag.NewFlagSet("sim", pflag.ContinueOnError)
	(&Options{}).AddFlags(fs)
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Name == "job-trace" {
			return
		}
		err := CheckUnused(func(name string) bool { return name == f.Name })
		if err == nil || !strings.Contains(err.Error(), "--"+f.Name+" needs --job-trace") {
			t.Errorf("--%s without --job-trace: error %v", f.Name, err)
		}
	})
	if err := CheckUnused(func(string) bool { return false }); err != nil {
		t.Errorf("no flag given: %v", err)
	}
}
