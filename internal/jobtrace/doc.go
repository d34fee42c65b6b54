// Package jobtrace reads job traces in the format of the Hawk (USENIX ATC
// 2015) and Eagle (ACM SoCC 2016) simulators and summarises a replay's
// job response times by job class.
//
// A trace has one job per line, fields separated by spaces or tabs:
//
//	submit_s  n_tasks  mean_task_s  d_1 d_2 ... d_n
//
// the job's arrival in seconds (lines in arrival order), its task count,
// the mean of its task durations (checked against the durations), and
// each task's duration in seconds. [Reader] streams such a file one job at
// a time, so a trace of millions of jobs never has to fit in memory; a
// malformed line is an error naming the file, the line and the field.
//
// [Recorder] collects a replay's outcomes, simulated or live: each job's
// response time (arrival to its last task's end) and each task's
// scheduling delay, split into short and long jobs by the job's mean task
// duration against a cutoff. [Recorder.Result] summarises them (n, mean,
// p50, p90, p99 in seconds) with the utilisation; [WriteTable] prints
// results side by side and [CDFChart] draws their distributions.
//
// It holds no global state, starts no goroutines and reads no clock.
package jobtrace
