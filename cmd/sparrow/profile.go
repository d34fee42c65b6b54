package main

import "github.com/sparrowfleet/sparrow/internal/calibrate"

// profileFlagHelp describes the node monitor's --profile flag.
const profileFlagHelp = `machine profile advertised to task-graph planners as the "perf" attribute: ` +
	`"calibrate" measures it at start (CPU loop, disk write and read of a temporary file; network rate from --profile-net), ` +
	`or write it: cores=N,ghz=F,read=MB/s,write=MB/s,net=MB/s`

// applyProfile sets attrs' perf attribute from --profile: calibrated, or
// the operator's text once it parses. "" leaves attrs alone.
var applyProfile = calibrate.ApplyProfile
