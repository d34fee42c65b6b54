package rpc

import "testing"

func TestCapabilities(t *testing.T) {
	var c Capabilities
	if c.Lacks("a:1", "fetchTask") {
		t.Fatal("a zero Capabilities lacks nothing")
	}
	c.MarkLacking("a:1", "fetchTask")
	c.MarkLacking("a:1", "taskDone")
	c.MarkLacking("b:1", "fetchTask")
	tests := []struct {
		peer, method string
		want         bool
	}{
		{"a:1", "fetchTask", true},
		{"a:1", "taskDone", true},
		{"a:1", "offerOutcome", false},
		{"b:1", "fetchTask", true},
		{"b:1", "taskDone", false},
	}
	for _, tc := range tests {
		if got := c.Lacks(tc.peer, tc.method); got != tc.want {
			t.Errorf("Lacks(%q, %q) = %v, want %v", tc.peer, tc.method, got, tc.want)
		}
	}
	c.Forget("a:1")
	if c.Lacks("a:1", "fetchTask") || c.Lacks("a:1", "taskDone") {
		t.Error("Forget left what was known of a:1")
	}
	if !c.Lacks("b:1", "fetchTask") {
		t.Error("Forget(a:1) dropped b:1")
	}
}
