package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/spf13/cobra"
)

func runPolicyCmd(t *testing.T, cmd *cobra.Command, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	var o, e bytes.Buffer
	cmd.SetOut(&o)
	cmd.SetErr(&e)
	cmd.SetArgs(args)
	err = cmd.Execute()
	return o.String(), e.String(), err
}

// TestBenchPolicyFlagErrors checks the settings the commands parse
// themselves; the options' own checks are tested in bench/policy/live.
func TestBenchPolicyFlagErrors(t *testing.T) {
	cases := []struct {
		cmd  func() *cobra.Command
		args []string
		want string
	}{
		{newBenchFairnessCmd, []string{"--weights", "1"}, "w0:w1"},
		{newBenchFairnessCmd, []string{"--weights", "1:0"}, "> 0"},
		{newBenchFairnessCmd, []string{"--plot", "x.pdf"}, ".svg or .png"},
		{newBenchPriorityCmd, []string{"--nodes", "0"}, "--nodes"},
		{newBenchConstraintsCmd, []string{"--attr", "gpu"}, "key=value"},
		{newBenchConstraintsCmd, []string{"--task-duration", "0s"}, "--task-duration"},
		{newBenchConstraintsCmd, []string{"extra"}, "unknown command"},
	}
	for _, c := range cases {
		_, _, err := runPolicyCmd(t, c.cmd(), c.args...)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: error %v, want one mentioning %q", c.args, err, c.want)
		}
	}
}
