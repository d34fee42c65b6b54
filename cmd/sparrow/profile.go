package main

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
	"github.com/sparrowfleet/sparrow/internal/calibrate"
)

// profileFlagHelp describes the node monitor's --profile flag.
const profileFlagHelp = `machine profile advertised to task-graph planners as the "perf" attribute: ` +
	`"calibrate" measures it at start (CPU loop, disk write and read of a temporary file; network rate from --profile-net), ` +
	`or write it: cores=N,ghz=F,read=MB/s,write=MB/s,net=MB/s`

// applyProfile sets attrs' perf attribute from --profile: calibrated, or
// the operator's text once it parses. "" leaves attrs alone.
func applyProfile(log zerolog.Logger, spec, dir string, netMBps float64, name string, attrs map[string]string) (map[string]string, error) {
	if spec == "" {
		return attrs, nil
	}
	if attrs == nil {
		attrs = map[string]string{}
	}
	if _, ok := attrs[perfmodel.ProfileAttr]; ok {
		return nil, fmt.Errorf("--profile and --attr %s=... both set the profile; give one", perfmodel.ProfileAttr)
	}
	var m perfmodel.Machine
	if spec == "calibrate" {
		var err error
		m, err = calibrate.Measure(name, calibrate.Options{Dir: dir, Net: netMBps * perfmodel.MB})
		if err != nil {
			return nil, fmt.Errorf("--profile calibrate: %w", err)
		}
		log.Info().Str("profile", perfmodel.FormatProfile(m)).Msg("machine profile calibrated")
	} else {
		var err error
		if m, err = perfmodel.ParseProfile(name, spec); err != nil {
			return nil, fmt.Errorf("--profile: %w", err)
		}
	}
	attrs[perfmodel.ProfileAttr] = perfmodel.FormatProfile(m)
	return attrs, nil
}
