package driver

import (
	"testing"
	"time"
)

func TestLaunchTimeRoundTrip(t *testing.T) {
	at := time.Unix(1_795_000_000, 123_456_789)
	got, ok := LaunchTime(LaunchBody(at))
	if !ok || !got.Equal(at) {
		t.Fatalf("LaunchTime(LaunchBody(%v)) = %v, %v", at, got, ok)
	}
	for _, body := range []string{"", "0s", "launched_at_unix_ns=", "launched_at_unix_ns=x", "launched_at_unix_ns=-5", "launched_at_unix_ns=0"} {
		if _, ok := LaunchTime([]byte(body)); ok {
			t.Errorf("LaunchTime(%q) accepted", body)
		}
	}
}

func FuzzLaunchTime(f *testing.F) {
	f.Add([]byte("launched_at_unix_ns=1795000000123456789"))
	f.Add([]byte("launched_at_unix_ns=99999999999999999999"))
	f.Fuzz(func(t *testing.T, body []byte) {
		at, ok := LaunchTime(body)
		if ok && at.UnixNano() <= 0 {
			t.Fatalf("accepted a non-positive time from %q", body)
		}
		if ok {
			if back, _ := LaunchTime(LaunchBody(at)); !back.Equal(at) {
				t.Fatalf("round trip of %v gave %v", at, back)
			}
		}
	})
}
