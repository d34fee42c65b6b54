package jobtrace

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"

	"github.com/sparrowfleet/sparrow/internal/stats"
)

// The short/long cutoffs of the Hawk and Eagle papers, in seconds of mean
// task duration.
const (
	CutoffYahoo  = 90.5811
	CutoffGoogle = 1129.532
)

// Class is a job's class.
type Class int

// The job classes.
const (
	Short Class = iota
	Long
)

func (c Class) String() string {
	if c == Long {
		return "long"
	}
	return "short"
}

// Classify returns Long if a job's mean task duration (seconds) is at
// least cutoff, else Short.
func Classify(meanTask, cutoff float64) Class {
	if meanTask >= cutoff {
		return Long
	}
	return Short
}

// Summary is a distribution of times, in seconds. Percentiles are by the
// nearest-rank method; all zero when N is 0.
type Summary struct {
	N    int     `json:"n"`
	Mean float64 `json:"mean"`
	P50  float64 `json:"p50"`
	P90  float64 `json:"p90"`
	P99  float64 `json:"p99"`
}

// summarize sorts v in place and summarises it.
func summarize(v []float64) Summary {
	if len(v) == 0 {
		return Summary{}
	}
	slices.Sort(v)
	s := 0.0
	for _, x := range v {
		s += x
	}
	return Summary{
		N:    len(v),
		Mean: s / float64(len(v)),
		P50:  stats.Quantile(v, 0.50),
		P90:  stats.Quantile(v, 0.90),
		P99:  stats.Quantile(v, 0.99),
	}
}

// ByClass holds one Summary per job class.
type ByClass struct {
	Short Summary `json:"short"`
	Long  Summary `json:"long"`
}

// Result summarises one replay. Short and Long are the job response times
// (arrival to last task's end); SchedulingDelay is, per task of each job
// class, the time from its job's arrival to its start.
type Result struct {
	Short  Summary `json:"short"`
	Long   Summary `json:"long"`
	Cutoff float64 `json:"cutoff_s"`
	// Utilisation is the task-seconds run over the slot-seconds available
	// from the first arrival to the last task's end.
	Utilisation     float64 `json:"utilisation"`
	SchedulingDelay ByClass `json:"scheduling_delay"`
}

// Recorder collects a replay's outcomes. It keeps one number per job and
// one per task, and each job's outcome when KeepJobs was called. It is not
// safe for concurrent use.
type Recorder struct {
	cutoff   float64
	keepJobs bool
	jobs     []JobOutcome
	resp     [2][]float64
	delay    [2][]float64
	busy     float64
	first    float64
	last     float64
	anything bool
}

// NewRecorder returns a Recorder splitting jobs at cutoff seconds of mean
// task duration.
func NewRecorder(cutoff float64) *Recorder { return &Recorder{cutoff: cutoff} }

// Cutoff returns the recorder's cutoff, in seconds.
func (r *Recorder) Cutoff() float64 { return r.cutoff }

// Class returns the class of a job whose mean task duration is meanTask.
func (r *Recorder) Class(meanTask float64) Class { return Classify(meanTask, r.cutoff) }

// Task records one task of a job of mean task duration meanTask that
// arrived at arrival, started at start and ran for dur (all in seconds).
func (r *Recorder) Task(meanTask, arrival, start, dur float64) {
	c := r.Class(meanTask)
	r.delay[c] = append(r.delay[c], start-arrival)
	r.busy += dur
	r.span(arrival, start+dur)
}

// Job records job number job of the trace (its ordinal, from 0), of mean
// task duration meanTask, that arrived at arrival and whose last task
// ended at end (seconds).
func (r *Recorder) Job(job int, meanTask, arrival, end float64) {
	c := r.Class(meanTask)
	r.resp[c] = append(r.resp[c], end-arrival)
	r.span(arrival, end)
	if r.keepJobs {
		r.jobs = append(r.jobs, JobOutcome{Job: job, Class: c, MeanTask: meanTask, Arrival: arrival, Response: end - arrival})
	}
}

// KeepJobs makes the Recorder keep every job's outcome, for Jobs.
func (r *Recorder) KeepJobs() { r.keepJobs = true }

// Jobs returns the outcomes recorded since KeepJobs, in the trace's
// order. The slice belongs to the Recorder.
func (r *Recorder) Jobs() []JobOutcome {
	slices.SortFunc(r.jobs, func(a, b JobOutcome) int { return a.Job - b.Job })
	return r.jobs
}

func (r *Recorder) span(from, to float64) {
	if !r.anything {
		r.first, r.last, r.anything = from, to, true
		return
	}
	r.first = min(r.first, from)
	r.last = max(r.last, to)
}

// Responses returns the recorded response times of class c, in seconds,
// sorted. The slice belongs to the Recorder.
func (r *Recorder) Responses(c Class) []float64 {
	slices.Sort(r.resp[c])
	return r.resp[c]
}

// Result summarises what was recorded on a cluster of slots task slots.
func (r *Recorder) Result(slots int) Result {
	res := Result{
		Short:  summarize(r.resp[Short]),
		Long:   summarize(r.resp[Long]),
		Cutoff: r.cutoff,
		SchedulingDelay: ByClass{
			Short: summarize(r.delay[Short]),
			Long:  summarize(r.delay[Long]),
		},
	}
	if span := r.last - r.first; span > 0 && slots > 0 {
		res.Utilisation = r.busy / (span * float64(slots))
	}
	return res
}

// Named is a result with the name of the run it comes from.
type Named struct {
	Name string
	Result
}

// WriteTable prints results one row per run and class, with each class's
// response-time figures divided by those of the run named ref (if any).
func WriteTable(w io.Writer, runs []Named, ref string) error {
	var base *Result
	for i := range runs {
		if runs[i].Name == ref {
			base = &runs[i].Result
		}
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	hdr := "run\tclass\tjobs\tmean_s\tp50_s\tp90_s\tp99_s\tdelay_p50_s\tdelay_p99_s\tutil\t"
	if base != nil {
		hdr += "mean/" + ref + "\tp50/" + ref + "\tp90/" + ref + "\tp99/" + ref + "\t"
	}
	fmt.Fprintln(tw, hdr)
	for _, r := range runs {
		for _, c := range []Class{Short, Long} {
			s, d := r.Short, r.SchedulingDelay.Short
			if c == Long {
				s, d = r.Long, r.SchedulingDelay.Long
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t%.3f\t", r.Name, c, s.N,
				s.Mean, s.P50, s.P90, s.P99, d.P50, d.P99, r.Utilisation)
			if base != nil {
				b := base.Short
				if c == Long {
					b = base.Long
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t", ratio(s.Mean, b.Mean), ratio(s.P50, b.P50), ratio(s.P90, b.P90), ratio(s.P99, b.P99))
			}
			fmt.Fprintln(tw)
		}
	}
	return tw.Flush()
}

func ratio(a, b float64) string {
	if b <= 0 {
		return "-"
	}
	return fmt.Sprintf("%.3f", a/b)
}
