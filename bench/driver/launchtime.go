package driver

import (
	"bytes"
	"strconv"
	"time"
)

// launchPrefix starts a task's OK message body when its executor reports
// when it launched the task (sparrow executor --report-launch-time).
const launchPrefix = "launched_at_unix_ns="

// LaunchBody is the OK message body that reports a launch time.
func LaunchBody(at time.Time) []byte {
	return strconv.AppendInt([]byte(launchPrefix), at.UnixNano(), 10)
}

// LaunchTime reads a launch time from an OK message body written by
// LaunchBody; ok is false for any other body.
func LaunchTime(body []byte) (at time.Time, ok bool) {
	rest, found := bytes.CutPrefix(body, []byte(launchPrefix))
	if !found {
		return time.Time{}, false
	}
	ns, err := strconv.ParseInt(string(rest), 10, 64)
	if err != nil || ns <= 0 {
		return time.Time{}, false
	}
	return time.Unix(0, ns), true
}
