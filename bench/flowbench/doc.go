// Package flowbench times the min-cost flow solver of core/flow against
// LEMON's NetworkSimplex and CostScaling (sparrow flow bench), from
// scratch and, for generated Quincy graphs, warm after churn.
package flowbench
