package main

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/sparrowfleet/sparrow/core/shortjobs"
)

// defaultShortCutoff is the Hawk and Eagle papers' cutoff for the Yahoo
// traces: a job whose mean task duration is at least this is long.
const defaultShortCutoff = 90581100 * time.Microsecond

// shortJobFlags are the long-task-aware policy's flags (core/shortjobs),
// the same on schedulers and node monitors.
type shortJobFlags struct {
	on     bool
	cutoff time.Duration
	share  float64
	starve int
	// pull and pullAfter are --short-pull and --short-pull-after; fs is
	// the flag set they were registered on, to tell a --short-pull given
	// from its default.
	pull      bool
	pullAfter time.Duration
	fs        *pflag.FlagSet
	// longSteer is --long-steer.
	longSteer bool
	// unestimated is --short-unestimated (schedulers only).
	unestimated string
	// overrun is --short-overrun.
	overrun bool
	// workRefresh is --short-work-refresh (schedulers only).
	workRefresh bool
	// classFirst is --short-class-first (node monitors only).
	classFirst bool
}

func (f *shortJobFlags) register(fs *pflag.FlagSet, scheduler bool) {
	fs.BoolVar(&f.on, "short-jobs", false, "run the long-task-aware policy, off by default: "+map[bool]string{
		true:  "class each job short or long by its mean task duration (the job's taskSeconds, else this scheduler's history of the app), steer short jobs' probes to node monitors advertising no long work and keep --short-share of the nodes for short jobs",
		false: "order queued reservations by their job's remaining work (SRPT), serve a freed slot from the same job first, and gossip whether this node runs long work",
	}[scheduler])
	fs.DurationVar(&f.cutoff, "short-cutoff", defaultShortCutoff, "with --short-jobs, the mean task duration from which a job is long; every scheduler and node monitor of a fleet should use the same")
	fs.BoolVar(&f.longSteer, "long-steer", true, "with --short-jobs, on by default: "+map[bool]string{
		true:  "place long jobs' reservations on the node monitors off the short-only share of the lowest advertised long-work levels, whole levels from the lowest until there are enough for the job's reservations, at random among them (a node monitor that advertises no level counts by its long tasks running); off: anywhere off the short-only share",
		false: "gossip a coarse level of this node's long work, running and queued (0 none, 1 one task, 2 two or three, 3 four to seven, ...), so that schedulers place long jobs on the least loaded node monitors; with it off, only whether it runs long work",
	}[scheduler])
	f.fs = fs
	fs.BoolVar(&f.pull, "short-pull", true, "with --short-jobs, run pulls, on by default (--short-pull=false turns them off): "+map[bool]string{
		true:  "keep the short jobs that still have unlaunched tasks --short-pull-after after submission in a backlog, gossip its least remaining work and its apps (at most 8, else any app), and answer a node monitor's pull with a task of the backlogged job with the least remaining work among the apps it hosts",
		false: "while a scheduler gossips a short backlog of an app with an executor here (or of any app), keep one pull reservation for it in the queue with that remaining work, so that a freed slot asks it for a waiting short task; every scheduler and node monitor of a fleet should set it alike",
	}[scheduler])
	fs.DurationVar(&f.pullAfter, "short-pull-after", time.Second, map[bool]string{
		true:  "with --short-pull, how long a short job waits with tasks unlaunched before it joins the backlog",
		false: "with --short-pull, how long a pull that got no task waits before it is queued again (unless the scheduler's advert changes first)",
	}[scheduler])
	fs.BoolVar(&f.overrun, "short-overrun", true, "with --short-jobs, on by default: "+map[bool]string{
		true:  "take a job whose request states no taskSeconds, classed short, as long once one of its tasks has run for --short-cutoff by this scheduler's account: its remaining work is then counted at 100 times --short-cutoff per task, it leaves the pull backlog, and node monitors of the short-only share get none of its tasks while it holds a reservation elsewhere",
		false: "count a short job's task that has run here for --short-cutoff as long work until it ends, in the long-work advert and level, so that schedulers steer short jobs and long ones by what the node holds, whatever the job's estimate said (or when it stated none)",
	}[scheduler])
	if scheduler {
		fs.StringVar(&f.unestimated, "short-unestimated", "tasks", "with --short-jobs, how a job whose request states no taskSeconds is classed: tasks (short, its remaining work counted as its unlaunched tasks times half --short-cutoff, so that among such jobs the fewest tasks go first) or history (by this scheduler's moving mean of the app's task durations; long before any finished)")
		fs.BoolVar(&f.workRefresh, "short-work-refresh", true, "with --short-jobs, on by default: each time a job's unlaunched tasks enter another power-of-two step (and when --short-overrun takes it long), send its remaining work to the node monitors holding its reservations (updateRemainingWork, batched per node monitor), so that their queues order it by its progress; node monitors built without the method are sent none")
		fs.Float64Var(&f.share, "short-share", 0.05, "with --short-jobs, the fraction of node monitors that run short jobs only, rounded up to whole node monitors (at least one when above 0) among those hosting the job's app, those of the smallest hash of their names; in [0, 1)")
	} else {
		fs.IntVar(&f.starve, "starve-limit", shortjobs.DefaultStarveLimit, "with --short-jobs, the most times a queued reservation may be passed over by younger ones, per slot (the queue's bound is this times --slots)")
		fs.BoolVar(&f.classFirst, "short-class-first", false, "with --short-jobs, serve every queued reservation of a short job before any of a long job's, then by remaining work; off by default, ordering by remaining work alone, under which a long job with little work left may go before a short job with many tasks but a short job whose estimate crossed the cutoff is not put behind every short one (see docs/experiments/traces.md)")
	}
}

// config returns the policy's settings, nil when it is off, or an error
// naming the bad flag.
func (f *shortJobFlags) config() (*shortjobs.Config, error) {
	if !f.on {
		return nil, nil
	}
	c := &shortjobs.Config{Cutoff: f.cutoff.Seconds(), ShortShare: f.share, StarveLimit: f.starve, LongSteer: f.longSteer, Overrun: f.overrun, WorkRefresh: f.workRefresh, ClassFirst: f.classFirst}
	if f.unestimated != "" {
		u, err := shortjobs.ParseUnestimated(f.unestimated)
		if err != nil {
			return nil, fmt.Errorf("--short-unestimated: %w", err)
		}
		c.Unestimated = u
	}
	if c.StarveLimit == 0 {
		c.StarveLimit = shortjobs.DefaultStarveLimit
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("--short-jobs: %w (flags --short-cutoff, --short-share, --starve-limit)", err)
	}
	return c, nil
}

// pullDelay returns --short-pull-after when pulls run, 0 when they do
// not, or an error naming the bad flag.
func (f *shortJobFlags) pullDelay() (time.Duration, error) {
	switch {
	case !f.pull:
		return 0, nil
	case !f.on && f.fs != nil && f.fs.Changed("short-pull"):
		return 0, fmt.Errorf("--short-pull needs --short-jobs")
	case !f.on:
		return 0, nil
	case f.pullAfter <= 0:
		return 0, fmt.Errorf("--short-pull-after must be positive, got %v", f.pullAfter)
	}
	return f.pullAfter, nil
}
