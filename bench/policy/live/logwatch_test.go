package live

import (
	"bytes"
	"testing"
)

func TestLogWatch(t *testing.T) {
	var out bytes.Buffer
	w := NewLogWatch(&out)
	w.Write([]byte(`{"level":"warn","message":"node monitor lost"}` + "\n"))
	w.Write([]byte(`{"level":"warn","message":"memberlist: Refuting a suspect message (from: nodemonitor-4)"}` + "\n"))
	w.Write([]byte(`{"level":"warn","message":"something else"}` + "\n"))
	w.mute(true)
	w.Write([]byte("muted\n"))
	w.mute(false)
	c := w.take()
	if c != (LogCounts{Lines: 3, NodeMonitorsLost: 1, GossipSuspicions: 1, Muted: 1}) {
		t.Fatalf("counts %+v", c)
	}
	if bytes.Contains(out.Bytes(), []byte("muted")) || bytes.Count(out.Bytes(), []byte("\n")) != 3 {
		t.Fatalf("output:\n%s", out.String())
	}
	if w.take() != (LogCounts{}) {
		t.Fatal("take did not reset")
	}
	var nilWatch *LogWatch
	nilWatch.mute(true)
	if nilWatch.take() != (LogCounts{}) {
		t.Fatal("nil watch")
	}
}
