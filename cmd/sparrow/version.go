package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/internal/buildinfo"
)

func init() { rootCmd.AddCommand(newVersionCmd()) }

func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "Print the module version and VCS revision this binary was built from",
		Long: `Print the build Go recorded in this binary: the module version (a tag, a
pseudo-version naming the commit, or "(devel)"), the VCS revision and
whether the tree was modified, and the Go toolchain. Every daemon advertises
the same version to the fleet, and "sparrow status" shows it per member.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			info := buildinfo.Read()
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(info)
			}
			_, err := fmt.Fprintln(cmd.OutOrStdout(), info)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the build as one JSON object")
	return cmd
}
