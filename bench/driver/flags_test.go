package driver

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/client"
	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/jobtrace"
)

func TestParseConstraint(t *testing.T) {
	for _, tc := range []struct {
		in      string
		want    client.Constraint
		wantErr bool
	}{
		{in: "mem=high", want: client.Constraint{Key: "mem", Op: "=", Values: []string{"high"}}},
		{in: " mem = high|huge ", want: client.Constraint{Key: "mem", Op: "=", Values: []string{"high", "huge"}}},
		{in: "rack!=r1", want: client.Constraint{Key: "rack", Op: "!=", Values: []string{"r1"}}},
		{in: "gpu", want: client.Constraint{Key: "gpu", Op: "exists"}},
		{in: "", wantErr: true},
		{in: "=high", wantErr: true},
		{in: "mem=", wantErr: true},
		{in: "mem=a||b", wantErr: true},
		{in: "!=x", wantErr: true},
	} {
		got, err := ParseConstraint(tc.in)
		if (err != nil) != tc.wantErr {
			t.Errorf("ParseConstraint(%q) error %v, want error %v", tc.in, err, tc.wantErr)
			continue
		}
		if err == nil && !reflect.DeepEqual(got, tc.want) {
			t.Errorf("ParseConstraint(%q) = %+v, want %+v", tc.in, got, tc.want)
		}
	}
}

// FuzzParseConstraint: whatever parses is a constraint the scheduler
// accepts, and a parsed "key=values" renders back to the same key.
func FuzzParseConstraint(f *testing.F) {
	for _, s := range []string{"mem=high", "rack!=a|b", "gpu", "", "a=b=c", "x!=", "|=|"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseConstraint(s)
		if err != nil {
			return
		}
		pc := placement.Constraint{Key: c.Key, Op: c.Op, Values: c.Values}
		if err := pc.Validate(); err != nil {
			t.Fatalf("ParseConstraint(%q) = %+v, which the scheduler refuses: %v", s, c, err)
		}
		if !strings.Contains(s, c.Key) {
			t.Fatalf("ParseConstraint(%q): key %q not in the input", s, c.Key)
		}
	})
}

// The preference flags: parsed into the driver's Preferences, refused
// without --prefer-nodes, validated; and the placement they give is a
// function of --seed alone.
func TestDrivePreferenceFlags(t *testing.T) {
	parse := func(args ...string) (Preferences, uint64, error) {
		var f PreferenceFlags
		fs := pflag.NewFlagSet("drive", pflag.ContinueOnError)
		f.Register(fs)
		seed := fs.Uint64("seed", 1, "sparrow drive's seed")
		if err := fs.Parse(args); err != nil {
			return Preferences{}, 0, err
		}
		p, err := f.Preferences(fs.Changed)
		return p, *seed, err
	}
	for _, tc := range []struct {
		name string
		args []string
		want Preferences
		err  string
	}{
		{name: "off by default", args: nil},
		{name: "defaults", args: []string{"--prefer-nodes=nm1,nm2,nm3"},
			want: Preferences{Nodes: []string{"nm1", "nm2", "nm3"}, Racks: 1, Replicas: 3, Blocks: 100, Zipf: 1.1}},
		{name: "every flag", args: []string{"--prefer-nodes= a, b ,c,d,", "--prefer-racks=2", "--replicas=2", "--blocks=7",
			"--zipf=0.5", "--delay-threshold=300ms", "--input-bytes=67108864"},
			want: Preferences{Nodes: []string{"a", "b", "c", "d"}, Racks: 2, Replicas: 2, Blocks: 7, Zipf: 0.5,
				DelayThreshold: 300 * time.Millisecond, InputBytes: 64 << 20}},
		{name: "delay without nodes", args: []string{"--delay-threshold=300ms"}, err: "--delay-threshold needs --prefer-nodes"},
		{name: "zipf without nodes", args: []string{"--zipf=1"}, err: "--zipf needs --prefer-nodes"},
		{name: "too many replicas", args: []string{"--prefer-nodes=a,b"}, err: "replicas"},
		{name: "too many racks", args: []string{"--prefer-nodes=a,b,c", "--prefer-racks=4"}, err: "racks"},
		{name: "sub-millisecond delay", args: []string{"--prefer-nodes=a,b,c", "--delay-threshold=1500us"}, err: "milliseconds"},
	} {
		got, _, err := parse(tc.args...)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s: error %v, want %q", tc.name, err, tc.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: %+v, %v; want %+v", tc.name, got, err, tc.want)
		}
	}

	args := []string{"--prefer-nodes=nm1,nm2,nm3,nm4,nm5,nm6,nm7,nm8,nm9", "--prefer-racks=3", "--blocks=20"}
	gen := func(extra ...string) Placement {
		p, seed, err := parse(append(args, extra...)...)
		if err != nil {
			t.Fatal(err)
		}
		pl, err := p.Generate(seed, 30, 4)
		if err != nil {
			t.Fatal(err)
		}
		return pl
	}
	if a, b := gen("--seed=5"), gen("--seed=5"); !reflect.DeepEqual(a, b) {
		t.Error("--seed=5 twice gave two placements")
	}
	if a, b := gen("--seed=5"), gen("--seed=6"); reflect.DeepEqual(a, b) {
		t.Error("--seed=5 and --seed=6 gave the same placement")
	}
}

// --job-trace loads the trace (only the first --jobs when given), and the
// flags that shape a generated workload, or only a trace, are refused
// where they do not apply.
func TestDriveTraceFlags(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.tr")
	bad := filepath.Join(dir, "bad.tr")
	if err := os.WriteFile(good, []byte("0 1 2 2\n1 2 100 100 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte("0 1 2 2\n1 2 100 100\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		args    []string
		jobs    int     // trace jobs loaded (-1: no trace)
		errWant string  // substring of the error
		scale   float64 // of the loaded trace
		keep    bool    // the trace keeps every job's outcome
	}{
		{name: "no trace", args: nil, jobs: -1},
		{name: "a trace", args: []string{"--job-trace", good, "--time-scale", "10"}, jobs: 2, scale: 10},
		{name: "the first jobs", args: []string{"--job-trace", good, "--jobs", "1"}, jobs: 1, scale: 1},
		{name: "a malformed line names file, line and field", args: []string{"--job-trace", bad}, errWant: bad + ":2: field d_2"},
		{name: "missing file", args: []string{"--job-trace", filepath.Join(dir, "none.tr")}, errWant: "none.tr"},
		{name: "a workload flag with a trace", args: []string{"--job-trace", good, "--rate", "5"}, errWant: "--rate does not apply"},
		{name: "a trace flag without a trace", args: []string{"--cutoff", "5"}, errWant: "--cutoff needs --job-trace"},
		{name: "per-job output without a trace", args: []string{"--jobs-out", filepath.Join(dir, "jobs.csv")}, errWant: "--jobs-out needs --job-trace"},
		{name: "per-job output", args: []string{"--job-trace", good, "--jobs-out", filepath.Join(dir, "jobs.csv")}, jobs: 2, scale: 1, keep: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var f TraceFlags
			fs := pflag.NewFlagSet("drive", pflag.ContinueOnError)
			f.Register(fs)
			jobs := fs.Int("jobs", 100, "sparrow drive's jobs")
			fs.Float64("rate", 0, "a flag of sparrow drive's generated workload")
			if err := fs.Parse(tc.args); err != nil {
				t.Fatal(err)
			}
			tr, err := f.Load(*jobs, fs.Changed)
			if tc.errWant != "" {
				if err == nil || !strings.Contains(err.Error(), tc.errWant) {
					t.Fatalf("error %v, want one saying %q", err, tc.errWant)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.jobs < 0 {
				if tr != nil {
					t.Fatalf("a trace loaded without --job-trace: %+v", tr)
				}
				return
			}
			if tr == nil || len(tr.Jobs) != tc.jobs || tr.Scale != tc.scale || tr.Cutoff != 90.5811 || tr.KeepJobs != tc.keep {
				t.Fatalf("trace %+v, want %d jobs at scale %v with the Yahoo cutoff, keeping outcomes %v", tr, tc.jobs, tc.scale, tc.keep)
			}
		})
	}
}

// --jobs-out writes the summary's job outcomes as CSV; without it
// nothing is written.
func TestWriteJobsOut(t *testing.T) {
	path := filepath.Join(t.TempDir(), "jobs.csv")
	sum := Summary{Jobs: []jobtrace.JobOutcome{
		{Job: 0, Class: jobtrace.Short, MeanTask: 2, Arrival: 0, Response: 0.5},
		{Job: 1, Class: jobtrace.Long, MeanTask: 200, Arrival: 0.25, Response: 7},
	}}
	if err := (TraceFlags{}).WriteJobsOut(sum); err != nil {
		t.Fatalf("without --jobs-out: %v", err)
	}
	if err := (TraceFlags{JobsOut: path}).WriteJobsOut(sum); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want := "run,job,class,mean_task_s,arrival_s,response_s\nlive,0,short,2,0,0.5\nlive,1,long,200,0.25,7\n"
	if string(got) != want {
		t.Errorf("--jobs-out wrote\n%s\nwant\n%s", got, want)
	}
	if err := (TraceFlags{JobsOut: filepath.Join(path, "x.csv")}).WriteJobsOut(sum); err == nil || !strings.Contains(err.Error(), "--jobs-out") {
		t.Errorf("unwritable --jobs-out: error %v, want one naming the flag", err)
	}
}

// The retry policy's flags exist with the driver's defaults, and the old
// --submit-retry is still accepted (deprecated) so scripts keep working.
func TestDriveRetryFlags(t *testing.T) {
	var c Config
	fs := pflag.NewFlagSet("drive", pflag.ContinueOnError)
	c.RegisterRetryFlags(fs)
	for _, tc := range []struct{ flag, want string }{
		{"retry-base", "100ms"},
		{"retry-max", "10s"},
		{"retry-budget", "0.1"},
		{"retry-window", "10s"},
		{"retry-budget-min", "1000"},
	} {
		f := fs.Lookup(tc.flag)
		if f == nil {
			t.Errorf("--%s: not defined", tc.flag)
			continue
		}
		if f.DefValue != tc.want || f.Usage == "" {
			t.Errorf("--%s: default %q, usage %q; want default %q and a usage", tc.flag, f.DefValue, f.Usage, tc.want)
		}
	}
	if f := fs.Lookup("submit-retry"); f == nil || f.Deprecated == "" {
		t.Errorf("--submit-retry: %+v, want a deprecated flag", f)
	}
	if err := fs.Parse([]string{"--submit-retry=50ms", "--retry-budget=0.2"}); err != nil {
		t.Errorf("parse: %v", err)
	}
}
