// Package client is the library applications link to use a sparrowfleet:
// a Frontend submits jobs to schedulers, fails over between them and
// receives task messages; a Backend is an executor that runs the tasks its
// node monitor launches and reports them finished.
//
// It is the public client library: it must not import the experiment
// harnesses, and it keeps the original Sparrow wire protocol unchanged
// (extensions are additive).
package client
