// Package guidance measures the fairness coordinator's cost per period at
// fleet sizes no test machine runs (sparrow bench coordinator): its
// publish path, coordinator.Solve then coordinator.Encode as
// coordinator.Guide runs them, is driven with synthetic node reports and
// its CPU time measured with getrusage; the gossip bytes every member
// sends are computed from memberlist's retransmit rule, and MeasureGossip
// counts them with real in-process memberlist members relaying the
// guidance. Direct delivery's replies are encoded with coordinator.Replies.
package guidance
