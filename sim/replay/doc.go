// Package replay runs `sparrow sim --job-trace`: a job trace in the Hawk
// and Eagle format (internal/jobtrace), streamed through the simulator's
// trace engine (sim.RunTrace) under each trace policy at each offered
// load, the points in parallel, each reading the file afresh. It prints a
// table per load (response times by job class against the ideal) or a
// JSON object per point, and the short and long jobs' response-time CDFs
// as plots.
//
// It is the simulator's harness: the daemons and the client library must
// not import it. Its errors name the sim command's flags.
package replay
