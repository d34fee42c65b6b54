// Command sparrow runs sparrowfleet: its daemons (scheduler, nodemonitor),
// the embedded loopback fleet (local), and the simulator and benchmarks.
// Each subcommand lives in its own file and registers itself in init.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/internal/buildinfo"
)

var rootCmd = &cobra.Command{
	Use:   "sparrow",
	Short: "sparrowfleet: a decentralized, sampling-based task scheduler fleet",
	Long: `sparrowfleet places sub-second tasks across a fleet with no central
scheduler: stateless schedulers batch-sample node monitors, which pull tasks
by late binding. Run "sparrow local" for an embedded loopback fleet.`,
	SilenceUsage:  true,
	SilenceErrors: true,
	// --version prints the same as "sparrow version".
	Version: buildinfo.Read().String(),
}

func init() { rootCmd.SetVersionTemplate("{{.Version}}\n") }

func main() {
	if err := rootCmd.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "sparrow:", err)
		os.Exit(1)
	}
}
