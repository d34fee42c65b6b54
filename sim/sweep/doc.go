// Package sweep runs the simulator of package sim over a grid of points
// (policies, probe ratios, loads), as sparrow sim does: every point is
// independent and seeded alone, points run in parallel, and the results
// print as a table, the zero-wait comparison of Table 2, JSON or a chart.
package sweep
