package client

import (
	"testing"
	"time"
)

// TestTaskPreferenceWire checks how a task's relaxation opt-in and input
// size reach the wire: whole milliseconds, and no inputBytes unless set.
func TestTaskPreferenceWire(t *testing.T) {
	tests := []struct {
		task  Task
		delay int32
		input int64 // -1: unset
	}{
		{Task{ID: "strict", Nodes: []string{"a"}}, 0, -1},
		{Task{ID: "relaxed", Nodes: []string{"a"}, DelayThreshold: 300*time.Millisecond + 999*time.Microsecond, InputBytes: 64 << 20}, 300, 64 << 20},
		{Task{ID: "huge", Nodes: []string{"a"}, DelayThreshold: 1000 * time.Hour}, 1<<31 - 1, -1},
	}
	for _, tt := range tests {
		req := Job{Tasks: []Task{tt.task}}.wire("app")
		p := req.Tasks[0].Preference
		if p.DelayThreshold != tt.delay {
			t.Errorf("%s: delayThreshold %d, want %d", tt.task.ID, p.DelayThreshold, tt.delay)
		}
		switch {
		case tt.input < 0 && p.InputBytes != nil:
			t.Errorf("%s: inputBytes %d, want unset", tt.task.ID, *p.InputBytes)
		case tt.input >= 0 && (p.InputBytes == nil || *p.InputBytes != tt.input):
			t.Errorf("%s: inputBytes %v, want %d", tt.task.ID, p.InputBytes, tt.input)
		}
	}
}
