// Package calibrate measures a machine's performance profile at start-up,
// for node monitors that advertise one to the planner (perfmodel.ProfileAttr)
// without an operator writing it by hand: the cores the process may use, an
// equivalent clock from a short CPU loop, and the disk's sequential write
// and read rates from a temporary file.
//
// It is plumbing, run once by the node monitor command: it reads the clock
// and does file I/O, so it stays out of core/. Measurements are short (well
// under a second of CPU and a few tens of megabytes of disk by default) and
// rough; a profile that matters should be written by hand, from a proper
// benchmark of the machine.
package calibrate
