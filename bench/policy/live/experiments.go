package live

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/sparrowfleet/sparrow/bench/policy"
	"github.com/sparrowfleet/sparrow/client"
)

// Common are the settings every experiment shares.
type Common struct {
	Fleet        FleetConfig
	TasksPerJob  int
	TaskDuration time.Duration
	Seed         uint64
	Progress     func(Progress)
	// Say, if set, receives one-line notes (e.g. which run is starting).
	Say func(string)
	// MaxLoad, if above zero, makes each fleet start wait (up to
	// MaxLoadWait) until the host's 1-minute load average is below it.
	MaxLoad     float64
	MaxLoadWait time.Duration
}

func (c Common) say(format string, args ...any) {
	if c.Say != nil {
		c.Say(fmt.Sprintf(format, args...))
	}
}

func (c Common) fleetParams(queue string) policy.Fleet {
	return policy.Fleet{
		Schedulers: c.Fleet.Schedulers, NodeMonitors: c.Fleet.NodeMonitors, Slots: c.Fleet.Slots,
		Queue: queue, ProbeRatio: c.Fleet.ProbeRatio, TasksPerJob: c.TasksPerJob,
		TaskMs: float64(c.TaskDuration) / float64(time.Millisecond), Seed: c.Seed,
	}
}

// waitLoad waits for the host to quieten (if asked) and returns the load
// before the run.
func (c Common) waitLoad(ctx context.Context) ([3]float64, time.Duration, bool) {
	waited, gaveUp := WaitForLoad(ctx, c.MaxLoad, c.MaxLoadWait, 10*time.Second, func(l float64, w time.Duration) {
		c.say("waiting for the 1-minute load average (%.2f) to drop below %.2f (%.0fs so far, at most %v)", l, c.MaxLoad, w.Seconds(), c.MaxLoadWait)
	})
	before, _ := ReadLoadAvg()
	return before, waited, gaveUp
}

// FairnessOptions configure the Figure 11 experiment.
type FairnessOptions struct {
	Common
	Interval time.Duration
	Bin      time.Duration
	// Weights are user0's and user1's; WeightSpec gives them as "w0:w1"
	// (Validate parses it, unless only Weights is set).
	Weights    [2]float64
	WeightSpec string
	User0Load  float64
	User1Loads []float64
}

// Fairness runs two users on fair queues: user0 offers User0Load
// throughout, user1 steps through User1Loads, one per Interval.
func Fairness(ctx context.Context, o FairnessOptions) (policy.FairnessReport, error) {
	spec := o.WeightSpec
	if spec == "" {
		spec = fmt.Sprintf("%g:%g", o.Weights[0], o.Weights[1])
	}
	o.say("fairness: %d node monitors x %d slots, weights %s, user1 loads %v per %v",
		o.Fleet.NodeMonitors, o.Fleet.Slots, spec, o.User1Loads, o.Interval)
	users := []string{"user0", "user1"}
	end := time.Duration(len(o.User1Loads)) * o.Interval
	schedules := []policy.Schedule{
		policy.Constant(end, o.User0Load),
		policy.StepSchedule(o.Interval, o.User1Loads...),
	}
	fc := o.Fleet
	fc.Queue = "fair"
	fc.Weights = map[string]float64{users[0]: o.Weights[0], users[1]: o.Weights[1]}
	cfg := Config{Fleet: fc, Seed: o.Seed, Progress: o.Progress, Say: o.Say}
	for i, u := range users {
		cfg.Streams = append(cfg.Streams, Stream{Name: u, User: client.User{Name: u}, TasksPerJob: o.TasksPerJob,
			TaskDuration: o.TaskDuration, Schedule: schedules[i]})
	}
	before, waited, gaveUp := o.waitLoad(ctx)
	res, err := Run(ctx, cfg)
	if err != nil {
		return policy.FairnessReport{}, err
	}
	host := Host(before, waited, gaveUp, res)
	weights := o.Weights[:]
	fa, err := policy.AnalyzeFairness(res.Spans, users, weights, schedules, res.TotalSlots, o.Bin, end)
	if err != nil {
		return policy.FairnessReport{}, err
	}
	work := time.Duration(o.TasksPerJob) * o.TaskDuration
	fa.SetOffered(res.Arrivals, []time.Duration{work, work}, res.TotalSlots)
	p := policy.FairnessParams{
		Fleet: o.fleetParams("fair"), IntervalS: o.Interval.Seconds(), BinS: o.Bin.Seconds(),
		Weights: weights, User0Load: o.User0Load, User1Loads: o.User1Loads,
	}
	return policy.NewFairnessReport(p, fa, res.Groups, host), nil
}

// PriorityOptions configure the Table 3 experiment.
type PriorityOptions struct {
	Common
	HPLoad   float64
	LPLoads  []float64
	Duration time.Duration
	Drain    time.Duration
	Warmup   time.Duration
}

// Priority runs, for each LP load, a fresh fleet on priority queues with
// a high-priority user (priority 0) at HPLoad and a low-priority user
// (priority 1) at that load, for Duration of arrivals and at most Drain
// more.
func Priority(ctx context.Context, o PriorityOptions) (policy.PriorityReport, error) {
	rep := policy.PriorityReport{Experiment: "priority", Params: policy.PriorityParams{
		Fleet: o.fleetParams("priority"), HPLoad: o.HPLoad, LPLoads: o.LPLoads,
		DurationS: o.Duration.Seconds(), DrainS: o.Drain.Seconds(), WarmupS: o.Warmup.Seconds(),
	}}
	fc := o.Fleet
	fc.Queue = "priority"
	for _, lp := range o.LPLoads {
		o.say("LP load %g: starting a fleet", lp)
		cfg := Config{Fleet: fc, Seed: o.Seed, Progress: o.Progress, Say: o.Say, Drain: o.Drain, Warmup: o.Warmup}
		cfg.Streams = []Stream{{Name: "hp", User: client.User{Name: "hp", Priority: 0}, TasksPerJob: o.TasksPerJob,
			TaskDuration: o.TaskDuration, Schedule: policy.Constant(o.Duration, o.HPLoad)}}
		if lp > 0 {
			cfg.Streams = append(cfg.Streams, Stream{Name: "lp", User: client.User{Name: "lp", Priority: 1}, TasksPerJob: o.TasksPerJob,
				TaskDuration: o.TaskDuration, Schedule: policy.Constant(o.Duration, lp)})
		}
		before, waited, gaveUp := o.waitLoad(ctx)
		res, err := Run(ctx, cfg)
		if err != nil {
			return rep, fmt.Errorf("LP load %g: %w", lp, err)
		}
		row := policy.PriorityRow{LPLoad: lp, HP: res.Groups[0], WindowS: res.Window.Seconds(), Host: Host(before, waited, gaveUp, res)}
		if len(res.Groups) > 1 {
			row.LP = res.Groups[1]
		} else {
			row.LP = policy.Group{Name: "lp"}
		}
		if pr, ok := policy.PaperTable3Row(lp); ok && math.Abs(o.HPLoad-0.25) < 1e-9 {
			row.Paper = &pr
		}
		rep.Rows = append(rep.Rows, row)
	}
	return rep, nil
}

// ConstraintsOptions configure the job-level constraints experiment.
type ConstraintsOptions struct {
	Common
	Queue string
	// AttrFraction of the node monitors (at least one) advertise
	// AttrKey=AttrValue; Attr gives them as "key=value" (Validate parses
	// it, unless only AttrKey and AttrValue are set).
	AttrFraction       float64
	AttrKey, AttrValue string
	Attr               string
	ConstrainedLoad    float64
	FreeLoad           float64
	Duration           time.Duration
	Drain              time.Duration
	Warmup             time.Duration
}

// AttrNodes is how many node monitors carry the attribute.
func (o ConstraintsOptions) AttrNodes() int {
	return min(o.Fleet.NodeMonitors, max(1, int(math.Round(o.AttrFraction*float64(o.Fleet.NodeMonitors)))))
}

// Constraints runs constrained jobs (every task must run on a node with
// the attribute) beside unconstrained ones on one fleet.
func Constraints(ctx context.Context, o ConstraintsOptions) (policy.ConstraintsReport, error) {
	n := o.AttrNodes()
	isAttr := func(i int) bool { return i < n }
	fc := o.Fleet
	fc.Queue = o.Queue
	fc.NodeAttrs = func(i int) map[string]string {
		if isAttr(i) {
			return map[string]string{o.AttrKey: o.AttrValue}
		}
		return nil
	}
	attr := o.AttrKey + "=" + o.AttrValue
	cfg := Config{Fleet: fc, Seed: o.Seed, Progress: o.Progress, Say: o.Say, Drain: o.Drain, Warmup: o.Warmup}
	cfg.Streams = []Stream{
		{Name: "constrained", User: client.User{Name: "constrained"}, TasksPerJob: o.TasksPerJob, TaskDuration: o.TaskDuration,
			Schedule: policy.Constant(o.Duration, o.ConstrainedLoad), CapacitySlots: n * fc.Slots,
			Constraints: []client.Constraint{{Key: o.AttrKey, Op: "=", Values: []string{o.AttrValue}}}},
		{Name: "unconstrained", User: client.User{Name: "unconstrained"}, TasksPerJob: o.TasksPerJob, TaskDuration: o.TaskDuration,
			Schedule: policy.Constant(o.Duration, o.FreeLoad)},
	}
	before, waited, gaveUp := o.waitLoad(ctx)
	res, err := Run(ctx, cfg)
	if err != nil {
		return policy.ConstraintsReport{}, err
	}
	rep := policy.ConstraintsReport{
		Experiment: "constraints",
		Params: policy.ConstraintsParams{
			Fleet: o.fleetParams(o.Queue), Attr: attr, AttrNodes: n,
			AttrFraction: float64(n) / float64(fc.NodeMonitors), ConstrainedLoad: o.ConstrainedLoad, FreeLoad: o.FreeLoad,
			DurationS: o.Duration.Seconds(), DrainS: o.Drain.Seconds(), WarmupS: o.Warmup.Seconds(),
		},
		Groups:        res.Groups,
		Placement:     policy.PlacementOf(res.Spans, []string{"constrained", "unconstrained"}, isAttr),
		AttrNodeUtil:  policy.NodeUtilisation(res.Spans, isAttr, n, fc.Slots, o.Duration),
		OtherNodeUtil: policy.NodeUtilisation(res.Spans, func(i int) bool { return !isAttr(i) }, fc.NodeMonitors-n, fc.Slots, o.Duration),
		WindowS:       res.Window.Seconds(),
		Host:          Host(before, waited, gaveUp, res),
	}
	return rep, nil
}
