// Package planner places a job's task graph on a small heterogeneous
// cluster: for each task a machine and an order, and the predicted
// makespan, after Peter et al., "Efficient data-parallel computing on small
// heterogeneous clusters" (ETH Zurich TR-756, 2012), §2.3 and §4.
//
// A Problem is a Graph (tasks with types and input tables, arcs with data
// volumes, materialized or pipelined), the machines' profiles and a
// perfmodel.Model per task type. A plan is a sequence of tasks per
// machine: every machine runs one task at a time, and when it is free it
// starts the next task of its sequence as soon as that task's inputs are
// ready (a semi-active schedule). EvaluateOrder predicts a plan's makespan
// with perfmodel's contention engine. The report's space (§4.3) is
// smaller: an assignment of tasks to machines, each machine starting the
// first of its tasks in the problem's priority order whose inputs are
// ready; Evaluate predicts that.
//
// Greedy is Dryad's scheduler (§2.3): the lowest-numbered ready task goes
// to the lowest-numbered free machine, blind to speed. Solve's
// assignment-only branch and bound (Options.AssignmentOnly, the baseline)
// seeds its search with it, branches on the machine of each task in
// priority order, prunes with lower bounds from the critical path,
// per-machine busy time, total work and per-resource load, breaks symmetry
// between identical machines and identical tasks, and stops at a node
// budget or an injected clock's time limit. Small spaces are searched
// depth-first to a proof of optimality; large ones by limited discrepancy
// search, with every new incumbent polished by single-task moves along its
// critical chain, since the bounds are too weak there to prune deep.
// Solve's default then searches assignments and orders together, seeded
// with that plan (order.go), so that a proof covers every sequence set.
// Exhaustive enumerates every assignment; it is the baseline's test oracle
// and the reproduction of the report's Figure 13.
//
// It is part of the deterministic core: it must not do I/O, start
// goroutines, read the wall clock or use global randomness; time limits
// are a node budget or a clock function the caller injects.
package planner
