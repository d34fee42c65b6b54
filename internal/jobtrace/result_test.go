package jobtrace

import (
	"bytes"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		mean, cutoff float64
		want         Class
	}{
		{10, CutoffYahoo, Short},
		{90.58, CutoffYahoo, Short},
		{90.5811, CutoffYahoo, Long},
		{1129, CutoffGoogle, Short},
		{5000, CutoffGoogle, Long},
	}
	for _, tc := range tests {
		if got := Classify(tc.mean, tc.cutoff); got != tc.want {
			t.Errorf("Classify(%v, %v) = %v, want %v", tc.mean, tc.cutoff, got, tc.want)
		}
	}
}

func TestRecorderResult(t *testing.T) {
	r := NewRecorder(100)
	// Ten short jobs with response times 1..10 s, one long job of 500 s.
	for i := 1; i <= 10; i++ {
		a := float64(10 * i)
		r.Task(5, a, a+0.5, float64(i)-0.5)
		r.Job(i-1, 5, a, a+float64(i))
	}
	r.Task(200, 0, 0, 500)
	r.Job(10, 200, 0, 500)
	res := r.Result(2)
	want := Summary{N: 10, Mean: 5.5, P50: 5, P90: 9, P99: 10}
	if res.Short != want {
		t.Errorf("short %+v, want %+v", res.Short, want)
	}
	if res.Long != (Summary{N: 1, Mean: 500, P50: 500, P90: 500, P99: 500}) {
		t.Errorf("long %+v", res.Long)
	}
	if res.SchedulingDelay.Short.P50 != 0.5 || res.SchedulingDelay.Long.N != 1 {
		t.Errorf("delay %+v", res.SchedulingDelay)
	}
	// busy: 0.5+1.5+...+9.5 = 50, plus 500; span 0..500, 2 slots.
	if u := res.Utilisation; math.Abs(u-550.0/1000) > 1e-12 {
		t.Errorf("utilisation %v, want 0.55", u)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{`"short":{"n":10,"mean":5.5,"p50":5,"p90":9,"p99":10}`, `"long":{"n":1`, `"utilisation":0.55`} {
		if !strings.Contains(string(b), k) {
			t.Errorf("JSON %s lacks %s", b, k)
		}
	}
}

func TestRecorderEmpty(t *testing.T) {
	res := NewRecorder(1).Result(4)
	if res.Short.N != 0 || res.Long.N != 0 || res.Utilisation != 0 {
		t.Fatalf("%+v", res)
	}
}

func TestWriteTableRatios(t *testing.T) {
	runs := []Named{
		{"ideal", Result{Short: Summary{N: 1, Mean: 2, P50: 2, P90: 2, P99: 2}, Long: Summary{N: 1, Mean: 10, P50: 10, P90: 10, P99: 10}}},
		{"x", Result{Short: Summary{N: 1, Mean: 3, P50: 3, P90: 4, P99: 5}, Long: Summary{N: 1, Mean: 10, P50: 10, P90: 10, P99: 10}}},
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, runs, "ideal"); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{"p99/ideal", "1.500", "2.500", "1.000"} {
		if !strings.Contains(out, want) {
			t.Errorf("table lacks %q:\n%s", want, out)
		}
	}
}

func TestCDF(t *testing.T) {
	v := make([]float64, 1000)
	for i := range v {
		v[i] = float64(i + 1)
	}
	pts := CDF(v)
	if len(pts) > cdfPoints+1 || pts[0].X != 1 || pts[len(pts)-1].Y != 1 || pts[len(pts)-1].X != 1000 {
		t.Fatalf("%d points, first %+v last %+v", len(pts), pts[0], pts[len(pts)-1])
	}
	for i := 1; i < len(pts); i++ {
		if pts[i].X < pts[i-1].X || pts[i].Y <= pts[i-1].Y {
			t.Fatalf("not increasing at %d: %+v %+v", i, pts[i-1], pts[i])
		}
	}
	if CDF(nil) != nil {
		t.Fatal("CDF of nothing")
	}
}

func TestCDFChartDraws(t *testing.T) {
	r := NewRecorder(10)
	for i := 1; i <= 50; i++ {
		r.Job(i-1, 1, 0, float64(i))
	}
	ch := CDFChart("t", "s", Short, []CDFRun{{"a", r}})
	var buf bytes.Buffer
	if err := ch.Write(&buf, "svg"); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(buf.Bytes(), []byte("<svg")) {
		t.Fatal("no svg")
	}
}

// Per-job outcomes are kept only when asked for, come back in the
// trace's order whatever order the jobs ended in, and write as CSV.
func TestRecorderJobs(t *testing.T) {
	r := NewRecorder(10)
	r.Job(0, 1, 0, 1)
	if r.Jobs() != nil {
		t.Fatalf("outcomes kept without KeepJobs: %+v", r.Jobs())
	}
	r = NewRecorder(10)
	r.KeepJobs()
	r.Job(2, 20, 0.5, 4)
	r.Job(0, 1, 0, 0.25)
	r.Job(1, 3, 0.25, 2)
	want := []JobOutcome{
		{Job: 0, Class: Short, MeanTask: 1, Arrival: 0, Response: 0.25},
		{Job: 1, Class: Short, MeanTask: 3, Arrival: 0.25, Response: 1.75},
		{Job: 2, Class: Long, MeanTask: 20, Arrival: 0.5, Response: 3.5},
	}
	if got := r.Jobs(); !slices.Equal(got, want) {
		t.Fatalf("outcomes %+v, want %+v", got, want)
	}
	for _, tc := range []struct {
		name   string
		header bool
		want   string
	}{
		{"with the header", true, "run,job,class,mean_task_s,arrival_s,response_s\nsim,0,short,1,0,0.25\nsim,1,short,3,0.25,1.75\nsim,2,long,20,0.5,3.5\n"},
		{"rows only", false, "sim,0,short,1,0,0.25\nsim,1,short,3,0.25,1.75\nsim,2,long,20,0.5,3.5\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b strings.Builder
			if err := WriteJobs(&b, "sim", r.Jobs(), tc.header); err != nil {
				t.Fatal(err)
			}
			if b.String() != tc.want {
				t.Errorf("CSV\n%s\nwant\n%s", b.String(), tc.want)
			}
		})
	}
}
