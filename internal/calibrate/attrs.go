package calibrate

import (
	"fmt"

	"github.com/rs/zerolog"

	"github.com/sparrowfleet/sparrow/core/perfmodel"
)

// ApplyProfile sets attrs' perfmodel.ProfileAttr from the node monitor's
// --profile: "calibrate" measures this machine (Measure, in dir, with the
// network rate netMBps MB/s), anything else is parsed as the operator's
// written profile; "" leaves attrs alone. It refuses a profile given
// twice, by --profile and by --attr.
func ApplyProfile(log zerolog.Logger, spec, dir string, netMBps float64, name string, attrs map[string]string) (map[string]string, error) {
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
		m, err = Measure(name, Options{Dir: dir, Net: netMBps * perfmodel.MB})
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
