// Package planreport runs sparrow plan: it loads a problem (a file or the
// built-in example), plans its task graph with core/planner's branch and
// bound within a budget of nodes and wall-clock time, reports the plan
// beside Dryad's greedy schedule, draws both as a Gantt chart, and
// optionally evaluates every assignment; or it hands the problem to
// bench/graphrun to carry both schedules out on a live fleet.
package planreport
