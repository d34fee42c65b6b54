// Package fairness runs the Choosy paper's §7.3 Mesos scenario (Ghodsi et
// al., EuroSys 2013) on a live in-process fleet: four machine types with
// node attributes, four backlogged users with the paper's placement
// constraints (Hadoop anywhere, Spark on high-memory nodes, CUDA on GPU
// nodes, MPI on 10 Gbps nodes) arriving and leaving on the paper's
// timeline, scaled down. It measures every user's share of the cluster
// over time from the executors' task spans, under three setups (per-node
// fair queues; Choosy queues with a coordinator; fair queues with the
// coordinator's CMMF weights), and compares it with the offline CMMF
// allocation of each phase (core/cmmf): the deviation once converged and
// the ramp-up time after each arrival or departure.
//
// The scenario and the analysis (scenario.go, analysis.go) are pure
// functions; run.go drives the fleet. It is an experiment harness: the
// daemons and the client library must not import it.
package fairness
