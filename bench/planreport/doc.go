// Package planreport runs sparrow plan: it plans a task graph with
// core/planner's branch and bound within a budget of nodes and wall-clock
// time, reports the plan beside Dryad's greedy schedule, draws both as a
// Gantt chart, and optionally evaluates every assignment.
package planreport
