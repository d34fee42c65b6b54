package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/bench/graphrun"
	"github.com/sparrowfleet/sparrow/core/planner"
)

// runPlanLive carries the plan and Dryad's greedy schedule out on an
// in-process loopback fleet whose node monitors advertise the problem's
// machine profiles, and prints the measured makespans next to the
// predicted ones as JSON.
func runPlanLive(p planner.Problem, f planFlags, enc *json.Encoder) error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fmt.Fprintf(os.Stderr, "live: %d node monitors with the problem's profiles, %d runs per schedule, scale %g s per model s\n",
		len(p.Machines), f.liveRuns, f.liveScale)
	res, err := graphrun.Measure(ctx, graphrun.Config{
		Problem: p, Scale: f.liveScale, Runs: f.liveRuns, PlanTime: f.timeLimit,
		Progress: func(s string) { fmt.Fprintln(os.Stderr, s) },
		Log:      zerolog.Nop(),
	})
	if err != nil {
		return err
	}
	return enc.Encode(res)
}
