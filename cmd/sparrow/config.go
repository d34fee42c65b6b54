package main

import (
	"github.com/rs/zerolog"
	"github.com/spf13/cobra"

	"github.com/sparrowfleet/sparrow/internal/flagconfig"
)

// daemonConfig is a daemon command's --config file and SPARROW_*
// environment (internal/flagconfig).
type daemonConfig struct{ *flagconfig.Config }

// withConfig adds --config to a daemon command and applies the file and
// environment to its flags before RunE.
func withConfig(cmd *cobra.Command) *daemonConfig { return &daemonConfig{flagconfig.Attach(cmd)} }

// report logs what the configuration did.
func (dc *daemonConfig) report(log zerolog.Logger) { dc.Report(log) }
