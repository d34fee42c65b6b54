package main

import (
	"bytes"
	"testing"
)

// TestSimFairnessCmdRejects: bad flags fail before any run (the study
// itself is tested in sim/fairstudy).
func TestSimFairnessCmdRejects(t *testing.T) {
	for _, args := range [][]string{
		{"--policy", "nope"},
		{"--seeds", "0"},
		{"--nodes", "0"},
		{"--plot-rmse", "x.txt"},
	} {
		cmd := newSimFairnessCmd()
		cmd.SetOut(&bytes.Buffer{})
		cmd.SetErr(&bytes.Buffer{})
		cmd.SetArgs(args)
		if err := cmd.Execute(); err == nil {
			t.Errorf("%v: accepted", args)
		}
	}
}
