package main

import "github.com/spf13/cobra"

// benchCmd groups the benchmark and experiment scenarios run against a real
// fleet; each scenario adds itself as a subcommand from its own file.
var benchCmd = &cobra.Command{
	Use:   "bench",
	Short: "Run benchmark and policy experiments against a real fleet",
	Long: `Run scenarios against a real fleet (in this process over loopback Thrift
and gossip, unless a scenario says otherwise) and print their results as a
table, or as JSON with --json. Each scenario documents its flags.`,
}

func init() { rootCmd.AddCommand(benchCmd) }
