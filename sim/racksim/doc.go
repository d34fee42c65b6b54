// Package racksim is a deterministic discrete-event simulation of the
// cluster and workload of Quincy's evaluation (Isard et al., "Quincy: Fair
// Scheduling for Distributed Computing Clusters", SOSP'09, §5–§6), built to
// reproduce the paper's Table 2, Table 4 and Figure 6.
//
// The cluster is 243 computers in 8 racks under one core switch, one task
// per computer; every computer has a 1 Gbit/s NIC and every rack a 6 Gbit/s
// (or, constrained, 1 Gbit/s) uplink. Tasks read their input blocks from the
// nearest replica over the links on the way, which share their bandwidth
// max-min fairly among the flows crossing them (Network), then compute for
// a fixed CPU time. The workload is Table 3's 30 application instances
// (Workload), admitted K at a time in a fixed order.
//
// Schedulers: the queue-based baselines of §3 (G, GF, GFP and GFH,
// implemented here) and Quincy's flow policies Q, QP, QF, QFP and QFPX,
// which run the product's own core/quincy graph builder and schedule reader
// and the core/flow solver unchanged.
//
// It is an experiment harness: daemons must not import it. It is pure: no
// goroutines, no I/O, no global randomness; a run is a function of its
// Config. The one exception is the solver's wall time, which Run measures
// with a clock the caller injects (Config.Clock) and which never influences
// the simulation.
package racksim
