package scale

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseCommand(t *testing.T) {
	start := `{"op":"start","slice":{"First":10,"Count":5,"Slots":1,"Apps":["app-0"],"Join":["127.0.1.1:7946"],"GossipProfile":"lan","HTTP":true}}`
	for _, tc := range []struct {
		name, line, want string // want: "" for a good command, else part of the error
	}{
		{"start", start, ""},
		{"counters", `{"op":"counters"}`, ""},
		{"kill", `{"op":"kill","kill":3}`, ""},
		{"stop", `{"op":"stop"}`, ""},
		{"unknown op", `{"op":"reboot"}`, "unknown op"},
		{"unknown field", `{"op":"stop","force":true}`, "unknown field"},
		{"trailing data", `{"op":"stop"} {"op":"stop"}`, "trailing"},
		{"not json", `stop`, "invalid"},
		{"start without slice", `{"op":"start"}`, "without a slice"},
		{"empty slice", strings.Replace(start, `"Count":5`, `"Count":0`, 1), "outside"},
		{"beyond the plan", strings.Replace(start, `"First":10`, `"First":2499`, 1), "outside"},
		{"no slots", strings.Replace(start, `"Slots":1`, `"Slots":0`, 1), "slots"},
		{"no apps", strings.Replace(start, `["app-0"]`, `[]`, 1), "apps"},
		{"unnamed app", strings.Replace(start, `["app-0"]`, `[""]`, 1), "apps"},
		{"nothing to join", strings.Replace(start, `["127.0.1.1:7946"]`, `null`, 1), "join"},
		{"negative kill", `{"op":"kill","kill":-1}`, "kill -1"},
		{"profile", `{"op":"profile","profile":"/tmp/idle-1000-child-0.pprof"}`, ""},
		{"profile stop", `{"op":"profile"}`, ""},
		{"profile path with a NUL", `{"op":"profile","profile":"a\u0000b"}`, "profile path"},
		{"profile path too long", `{"op":"profile","profile":"` + strings.Repeat("a", 5000) + `"}`, "profile path"},
		{"paced start", strings.Replace(start, `"HTTP":true`, `"HTTP":true,"StartEvery":2500000000`, 1), ""},
		{"start paced backwards", strings.Replace(start, `"HTTP":true`, `"HTTP":true,"StartEvery":-1`, 1), "starts every"},
		{"start paced beyond a minute", strings.Replace(start, `"HTTP":true`, `"HTTP":true,"StartEvery":61000000000`, 1), "starts every"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseCommand([]byte(tc.line))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("parseCommand(%s) = %v, want no error", tc.line, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("parseCommand(%s) = %v, want an error containing %q", tc.line, err, tc.want)
			}
		})
	}
}

func TestParseEvent(t *testing.T) {
	for _, tc := range []struct {
		name, line, want string
	}{
		{"progress", `{"kind":"progress","started":50,"of":200}`, ""},
		{"ready", `{"kind":"ready"}`, ""},
		{"counters", `{"kind":"counters","gossip":{"UDPBytes":1},"cpu_nanos":5}`, ""},
		{"killed", `{"kind":"killed","victim":{"name":"nodemonitor-9","addr":"127.0.10.10:1"}}`, ""},
		{"launch", `{"kind":"launch","launch":{"node":3,"request_id":"job-1","task_id":"0","at_unix_nano":1}}`, ""},
		{"failed", `{"kind":"failed","error":"no"}`, ""},
		{"stopped", `{"kind":"stopped"}`, ""},
		{"profiled", `{"kind":"profiled"}`, ""},
		{"progress beyond its total", `{"kind":"progress","started":5,"of":4}`, "progress"},
		{"counters without counts", `{"kind":"counters"}`, "without counts"},
		{"killed nobody", `{"kind":"killed","victim":{"name":""}}`, "names no"},
		{"launch of no job", `{"kind":"launch","launch":{"node":3}}`, "names no job"},
		{"failed silently", `{"kind":"failed"}`, "without an error"},
		{"unknown kind", `{"kind":"hello"}`, "unknown event"},
		{"a stray log line", `{"level":"warn","message":"x"}`, "unknown field"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseEvent([]byte(tc.line))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("parseEvent(%s) = %v, want no error", tc.line, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("parseEvent(%s) = %v, want an error containing %q", tc.line, err, tc.want)
			}
		})
	}
}

func TestControlLinesRoundTrip(t *testing.T) {
	c := Command{Op: opStart, Slice: &SliceSpec{First: 200, Count: 200, Slots: 2, Apps: []string{"a", "b"}, Join: []string{"127.0.1.1:1"}, GossipProfile: "lan", HTTP: true}}
	line := encodeLine(c)
	if line[len(line)-1] != '\n' || strings.Count(string(line), "\n") != 1 {
		t.Fatalf("encodeLine = %q, want one line", line)
	}
	got, err := parseCommand(line)
	if err != nil || !reflect.DeepEqual(got, c) {
		t.Errorf("command round trip: %+v, %v; want %+v", got, err, c)
	}
	e := Event{Kind: evCounters, Gossip: &GossipTotals{UDPBytes: 1, UDPPackets: 2, TCPBytes: 3, TCPWrites: 4, Alive: 5, Suspect: 6}, CPUNanos: 7}
	ge, err := parseEvent(encodeLine(e))
	if err != nil || !reflect.DeepEqual(ge, e) {
		t.Errorf("event round trip: %+v, %v; want %+v", ge, err, e)
	}
}

// FuzzParseControl checks that the parsers never panic and that whatever
// they accept encodes to a line they accept again as the same message.
func FuzzParseControl(f *testing.F) {
	for _, s := range []string{
		`{"op":"start","slice":{"First":0,"Count":1,"Slots":1,"Apps":["a"],"Join":["x:1"]}}`,
		`{"op":"kill","kill":2}`, `{"kind":"launch","launch":{"node":1,"request_id":"j"}}`,
		`{"kind":"counters","gossip":{}}`, `{"kind":"progress","started":1,"of":2}`, `{}`, `[`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		if c, err := parseCommand(line); err == nil {
			again, err := parseCommand(encodeLine(c))
			if err != nil || !reflect.DeepEqual(again, c) {
				t.Errorf("command %+v re-parsed as %+v, %v", c, again, err)
			}
		}
		if e, err := parseEvent(line); err == nil {
			again, err := parseEvent(encodeLine(e))
			if err != nil || !reflect.DeepEqual(again, e) {
				t.Errorf("event %+v re-parsed as %+v, %v", e, again, err)
			}
		}
	})
}
