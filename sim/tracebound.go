package sim

import (
	"errors"
	"io"

	"github.com/sparrowfleet/sparrow/internal/jobtrace"
	"github.com/sparrowfleet/sparrow/sim/lowerbound"
)

// boundMaxSpan caps the jobs a window of the bound holds (see
// lowerbound.Problem.MaxSpan): a burst that overloads the cluster spans
// far fewer short jobs than that, and the cap keeps a whole trace's bound
// to seconds.
const boundMaxSpan = 4096

// runTraceBound reads every job and bounds, per class, the quantiles of
// the jobs' response times under any scheduler on cfg's slots
// (package lowerbound), with the arrivals and ideals the other policies
// see: a job arrives when the simulation would deliver it, and its ideal
// is TraceIdeal's response. Nothing is recorded per job.
func runTraceBound(cfg TraceConfig, next func() (jobtrace.Job, error)) (TraceResult, error) {
	if err := cfg.Validate(); err != nil {
		return TraceResult{}, err
	}
	res := TraceResult{Policy: cfg.Policy.String(), Nodes: cfg.Nodes, Slots: cfg.Slots}
	res.Cutoff = cfg.Aware.Cutoff
	ms := func(sec float64) float64 { return sec * 1000 / cfg.TimeScale }
	var classes [2][]lowerbound.Job
	first, now := 0.0, 0.0
	for {
		tj, err := next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return TraceResult{}, err
		}
		if res.Jobs == 0 {
			first = tj.Submit
		}
		// As traceSim.scheduleArrival: never before the previous arrival.
		now = max(ms((tj.Submit-first)*cfg.GapScale), now)
		res.Jobs++
		res.Tasks += int64(len(tj.Durations))
		c := jobtrace.Classify(tj.Mean(), cfg.Aware.Cutoff)
		classes[c] = append(classes[c], lowerbound.Job{
			Arrival: now / 1000,
			Work:    ms(tj.Work()) / 1000,
			Ideal:   (3*cfg.RTT/2 + ms(tj.Longest())) / 1000,
		})
		res.SimSeconds = now / 1000
	}
	res.Short = boundSummary(classes[jobtrace.Short], cfg.Nodes*cfg.Slots)
	res.Long = boundSummary(classes[jobtrace.Long], cfg.Nodes*cfg.Slots)
	return res, nil
}

// boundSummary is the bound's summary of one class: the bounds of its
// mean and quantiles.
func boundSummary(jobs []lowerbound.Job, slots int) jobtrace.Summary {
	if len(jobs) == 0 {
		return jobtrace.Summary{}
	}
	p := lowerbound.New(jobs, slots)
	p.MaxSpan = boundMaxSpan
	return jobtrace.Summary{
		N:    len(jobs),
		Mean: p.Mean(),
		P50:  p.Quantile(0.50),
		P90:  p.Quantile(0.90),
		P99:  p.Quantile(0.99),
	}
}
