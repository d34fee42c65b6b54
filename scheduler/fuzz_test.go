package scheduler

// Fuzz targets for request validation: hostile input is refused with an
// error, never a panic.
//
// FuzzParseRequest decodes the fuzz input as a binary-protocol
// TSchedulingRequest, the way a submitJob argument arrives, and validates
// it; FuzzParseRequestFields builds the request from fuzzed fields
// instead, which reaches nil tasks and constraints (no decoder produces
// them) and float edge cases faster. Both check, for every input:
//   - ParseRequest never panics and does not modify the request;
//   - a refused request yields the zero Job (nothing is partly scheduled);
//   - it accepts exactly the requests that satisfy its documented rules
//     (validRequest, written independently of ParseRequest);
//   - an accepted request gives a Job whose invariants hold (checkJob):
//     non-empty app within its limit, unique task ids within their limit,
//     len(Tasks) == len(Specs) == len(req.Tasks) with tasks matching their
//     specs, valid constraints matching the request's, a finite probe
//     ratio in [1, MaxProbeRatio] chosen by the documented precedence,
//     and relaxation for exactly the tasks that opted in.
//
// The wire decoder here is thrift's plain binary protocol with a small
// MaxMessageSize: the server's boundedProtocol is unexported in package rpc
// (its decoding paths are fuzzed there, see rpc/fuzz_test.go).
//
//	go test -run NONE -fuzz '^FuzzParseRequest$' -fuzztime 60s ./scheduler/
//
// See docs/FUZZING.md.

import (
	"context"
	"fmt"
	"math"
	"net"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/thrift/lib/go/thrift"

	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// fuzzMaxMessage caps decoded sizes: a list header may claim at most this
// many elements, so one lying header costs at most 16 bytes times this.
// Inputs longer than it are skipped.
const fuzzMaxMessage = 64 << 10

// decodeRequest decodes data as a TSchedulingRequest. On a decoding error
// the partly filled request is returned too: it is still a request value
// that ParseRequest must handle.
func decodeRequest(data []byte) (*sparrowrpc.TSchedulingRequest, error) {
	mem := thrift.NewTMemoryBufferLen(len(data))
	mem.Write(data)
	prot := thrift.NewTBinaryProtocolConf(mem, &thrift.TConfiguration{MaxMessageSize: fuzzMaxMessage})
	req := &sparrowrpc.TSchedulingRequest{}
	return req, req.Read(context.Background(), prot)
}

func encodeRequest(tb testing.TB, req *sparrowrpc.TSchedulingRequest) []byte {
	tb.Helper()
	mem := thrift.NewTMemoryBuffer()
	if err := req.Write(context.Background(), thrift.NewTBinaryProtocolConf(mem, nil)); err != nil {
		tb.Fatal(err)
	}
	return append([]byte(nil), mem.Bytes()...)
}

// seedRequests are valid and invalid requests for the corpora. Every one
// has a user and task preferences, which the generated Write requires.
func seedRequests() []*sparrowrpc.TSchedulingRequest {
	user := &sparrowrpc.TUserGroupInfo{User: "alice", Group: "eng", Priority: 1}
	task := func(id string, nodes, racks []string) *sparrowrpc.TTaskSpec {
		return &sparrowrpc.TTaskSpec{TaskId: id, Preference: &sparrowrpc.TPlacementPreference{Nodes: nodes, Racks: racks}, Message: []byte("m-" + id)}
	}
	long := strings.Repeat("x", maxIDBytes+1)
	return []*sparrowrpc.TSchedulingRequest{
		{App: "spark", User: user},
		{App: "spark", User: user, Tasks: []*sparrowrpc.TTaskSpec{task("t0", nil, nil), task("t1", nil, nil)}},
		{App: "spark", User: user, Tasks: []*sparrowrpc.TTaskSpec{task("t0", []string{"h1", "h2"}, []string{"r1"}), task("t1", nil, nil)},
			ProbeRatio: ptr(1.5), RequestId: ptr("req-1"), Description: ptr("d"),
			Constraints: []*sparrowrpc.TConstraint{{Key: "gpu", Op: "exists"}, {Key: "rack", Op: "!=", Values: []string{"r9"}}}},
		{App: "spark", User: user, Tasks: []*sparrowrpc.TTaskSpec{task("t", nil, nil)}, Constraints: []*sparrowrpc.TConstraint{{Key: "zone", Op: "=", Values: []string{"a"}}}},
		{App: "", User: user, Tasks: []*sparrowrpc.TTaskSpec{task("t", nil, nil)}},
		{App: "spark", User: user, Tasks: []*sparrowrpc.TTaskSpec{task("t", nil, nil), task("t", nil, nil)}},
		{App: "spark", User: user, Tasks: []*sparrowrpc.TTaskSpec{task(long, nil, nil)}},
		{App: "spark", User: user, RequestId: ptr(long)},
		{App: strings.Repeat("a", maxAppBytes+1), User: user},
		{App: "spark", User: user, ProbeRatio: ptr(math.NaN())},
		{App: "spark", User: user, ProbeRatio: ptr(math.Inf(-1))},
		{App: "spark", User: user, ProbeRatio: ptr(0.999)},
		{App: "spark", User: user, ProbeRatio: ptr(float64(placement.MaxProbeRatio))},
		{App: "spark", User: user, ProbeRatio: ptr(math.Nextafter(placement.MaxProbeRatio, 1000))},
		{App: "spark", User: user, Constraints: []*sparrowrpc.TConstraint{{Key: "k", Op: "~"}}},
		{App: "spark", User: user, Constraints: []*sparrowrpc.TConstraint{{Op: "exists"}}},
		{App: "spark", User: user, Constraints: []*sparrowrpc.TConstraint{{Key: "k", Op: "="}}},
		{App: "spark", User: user, Constraints: slices.Repeat([]*sparrowrpc.TConstraint{{Key: "k", Op: "exists"}}, maxConstraints+1)},
		{App: "spark", User: user, Tasks: []*sparrowrpc.TTaskSpec{task("t", nil, nil)}, FrontendAddress: ptr("10.0.0.7:50201")},
		{App: "spark", User: user, Tasks: []*sparrowrpc.TTaskSpec{task("t", nil, nil)}, FrontendAddress: ptr("0.0.0.0:50201")},
		{App: "spark", User: user, FrontendAddress: ptr("frontend")},
		{App: "spark", User: user, FrontendAddress: ptr("[::]:1")},
	}
}

// FuzzParseFrontendAddress: a job's frontendAddress is accepted exactly
// when it meets its documented rules (validFrontendAddress), never with a
// panic, and a refusal names the problem.
func FuzzParseFrontendAddress(f *testing.F) {
	for _, seed := range []string{"10.0.0.7:50201", "fe.example:1", "[fd00::1]:50201", "0.0.0.0:1", "[::]:1", ":1",
		"h:0", "h:65536", "h:+80", "h", "", "[::1", strings.Repeat("h", maxIDBytes) + ":1"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		err := ParseFrontendAddress(addr)
		if valid := validFrontendAddress(addr); valid != (err == nil) {
			t.Fatalf("ParseFrontendAddress(%q) = %v; the rules say valid = %v", addr, err, valid)
		}
		if err != nil && !strings.Contains(err.Error(), "frontend") {
			t.Fatalf("refusal %q does not say it is about the frontend address", err)
		}
	})
}

// seedRatios are Ratios for the corpora, valid and not.
var seedRatios = []Ratios{
	{Default: DefaultProbeRatio},
	{Default: 1.5, Constrained: 3},
	{Default: math.NaN()},
	{Default: -1, Constrained: 2},
	{Default: 2, Constrained: math.Inf(1)},
}

// FuzzParseRequest decodes data as a wire TSchedulingRequest and
// validates it with ratios (def, constrained).
func FuzzParseRequest(f *testing.F) {
	for i, req := range seedRequests() {
		wire := encodeRequest(f, req)
		r := seedRatios[i%len(seedRatios)]
		f.Add(wire, r.Default, r.Constrained)
		f.Add(wire[:len(wire)/2], r.Default, r.Constrained)
		f.Add(wire[:len(wire)-1], DefaultProbeRatio, 0.0)
	}
	f.Add([]byte{}, DefaultProbeRatio, 0.0)
	f.Add([]byte{0}, DefaultProbeRatio, 0.0) // STOP only: all fields absent
	// Field 2 (tasks) claiming 2^30, 2^16 and 3 elements, carrying none.
	for _, claim := range []uint32{1 << 30, 1 << 16, 3} {
		f.Add([]byte{11, 0, 1, 0, 0, 0, 1, 'a', 15, 0, 2, 12,
			byte(claim >> 24), byte(claim >> 16), byte(claim >> 8), byte(claim), 0}, DefaultProbeRatio, 0.0)
	}
	f.Fuzz(func(t *testing.T, data []byte, def, constrained float64) {
		if len(data) > fuzzMaxMessage {
			return
		}
		req, _ := decodeRequest(data)
		checkParse(t, req, Ratios{Default: def, Constrained: constrained})
	})
}

// Flags of FuzzParseRequestFields.
const (
	fzNilRequest      = 1 << iota // ParseRequest(nil)
	fzNilTask                     // the middle task is nil
	fzAllPrefs                    // every task gets the preference, not only the first
	fzConstraint                  // add the constraint even when key and op are empty
	fzNilConstraint               // append a nil constraint
	fzRatio                       // the request sets probeRatio
	fzRequestID                   // the request sets requestId (even to "")
	fzManyConstraints             // maxConstraints+1 copies of the constraint
	fzNilUser                     // no user
	fzNilPreference               // tasks without the preference get a nil one, not an empty one
)

// FuzzParseRequestFields builds a request from fuzzed fields: app,
// comma-separated task ids, a request id, one constraint (values
// comma-separated), a preference "node node|rack rack", a probe ratio and
// the Ratios, with flags choosing among shapes (the fz constants).
func FuzzParseRequestFields(f *testing.F) {
	f.Add(uint16(0), "spark", "t0,t1", "", "", "", "", "", 0.0, DefaultProbeRatio, 0.0)
	f.Add(uint16(fzRatio|fzRequestID), "spark", "t0,t1,t2", "req-1", "gpu", "exists", "", "h1 h2|r1", 1.5, 2.0, 3.0)
	f.Add(uint16(fzRatio), "spark", "t", "", "", "", "", "", math.NaN(), 2.0, 0.0)
	f.Add(uint16(fzRatio), "spark", "t", "", "", "", "", "", 100.00000000000001, 2.0, 0.0)
	f.Add(uint16(0), "spark", "t,t", "", "", "", "", "", 0.0, 2.0, 0.0)
	f.Add(uint16(0), "spark", ",", "", "", "", "", "", 0.0, 2.0, 0.0)
	f.Add(uint16(0), "", "t", "", "", "", "", "", 0.0, 2.0, 0.0)
	f.Add(uint16(fzNilRequest), "", "", "", "", "", "", "", 0.0, 2.0, 0.0)
	f.Add(uint16(fzNilTask), "spark", "a,b,c", "", "", "", "", "", 0.0, 2.0, 0.0)
	f.Add(uint16(fzNilConstraint), "spark", "a", "", "k", "=", "v", "", 0.0, 2.0, 0.0)
	f.Add(uint16(fzConstraint), "spark", "a", "", "", "", "", "", 0.0, 2.0, 0.0)
	f.Add(uint16(0), "spark", "a", "", "k", "~", "", "", 0.0, 2.0, 0.0)
	f.Add(uint16(0), "spark", "a", "", "k", "!=", "", "", 0.0, 2.0, 0.0)
	f.Add(uint16(fzManyConstraints), "spark", "a", "", "k", "exists", "", "", 0.0, 2.0, 0.0)
	f.Add(uint16(fzNilUser|fzNilPreference|fzAllPrefs), "spark", "a,b", "", "", "", "", "|", 0.0, 0.5, 4.0)
	f.Add(uint16(fzRequestID), "spark", "a", strings.Repeat("r", maxIDBytes+1), "", "", "", "", 0.0, 2.0, 0.0)
	f.Fuzz(func(t *testing.T, flags uint16, app, taskIDs, requestID, key, op, values, pref string, ratio, def, constrained float64) {
		ratios := Ratios{Default: def, Constrained: constrained}
		if flags&fzNilRequest != 0 {
			checkParse(t, nil, ratios)
			return
		}
		req := &sparrowrpc.TSchedulingRequest{App: app, User: &sparrowrpc.TUserGroupInfo{User: "u"}}
		if flags&fzNilUser != 0 {
			req.User = nil
		}
		var p *sparrowrpc.TPlacementPreference
		if pref != "" {
			nodes, racks, _ := strings.Cut(pref, "|")
			p = &sparrowrpc.TPlacementPreference{Nodes: strings.Fields(nodes), Racks: strings.Fields(racks)}
		}
		if taskIDs != "" {
			for i, id := range strings.Split(taskIDs, ",") {
				spec := &sparrowrpc.TTaskSpec{TaskId: id, Message: []byte(id)}
				switch {
				case p != nil && (i == 0 || flags&fzAllPrefs != 0):
					spec.Preference = p
				case flags&fzNilPreference == 0:
					spec.Preference = &sparrowrpc.TPlacementPreference{}
				}
				req.Tasks = append(req.Tasks, spec)
			}
			if flags&fzNilTask != 0 {
				req.Tasks[len(req.Tasks)/2] = nil
			}
		}
		if key != "" || op != "" || values != "" || flags&fzConstraint != 0 {
			c := &sparrowrpc.TConstraint{Key: key, Op: op}
			if values != "" {
				c.Values = strings.Split(values, ",")
			}
			n := 1
			if flags&fzManyConstraints != 0 {
				n = maxConstraints + 1
			}
			req.Constraints = slices.Repeat([]*sparrowrpc.TConstraint{c}, n)
		}
		if flags&fzNilConstraint != 0 {
			req.Constraints = append(req.Constraints, nil)
		}
		if flags&fzRatio != 0 {
			req.ProbeRatio = &ratio
		}
		if flags&fzRequestID != 0 {
			req.RequestId = &requestID
		}
		checkParse(t, req, ratios)
	})
}

// checkParse runs ParseRequest and checks everything listed at the top of
// this file.
func checkParse(t *testing.T, req *sparrowrpc.TSchedulingRequest, ratios Ratios) {
	t.Helper()
	before := fingerprint(req)
	job, err := ParseRequest(req, ratios)
	if after := fingerprint(req); after != before {
		t.Fatalf("ParseRequest modified the request:\nbefore %s\nafter  %s", before, after)
	}
	valid, why := validRequest(req, ratios)
	switch {
	case err != nil && valid:
		t.Fatalf("ParseRequest refused a valid request (%s): %v", before, err)
	case err == nil && !valid:
		t.Fatalf("ParseRequest accepted a request that %s: %s", why, before)
	case err != nil:
		if !reflect.DeepEqual(job, Job{}) {
			t.Fatalf("refused request (%v) returned a partial job %+v", err, job)
		}
		if err.Error() == "" {
			t.Fatal("empty error message")
		}
	default:
		checkJob(t, req, ratios, job)
	}
}

// isConstrained reports whether req limits where any of its tasks run.
func isConstrained(req *sparrowrpc.TSchedulingRequest) bool {
	if len(req.Constraints) > 0 {
		return true
	}
	for _, s := range req.Tasks {
		if s != nil && s.Preference != nil && (len(s.Preference.Nodes) > 0 || len(s.Preference.Racks) > 0) {
			return true
		}
	}
	return false
}

// wantRatio is the probe ratio a request gets: its own, else the
// constrained default for a constrained job when set, else the default.
func wantRatio(req *sparrowrpc.TSchedulingRequest, ratios Ratios) float64 {
	switch {
	case req.ProbeRatio != nil:
		return *req.ProbeRatio
	case isConstrained(req) && ratios.Constrained != 0:
		return ratios.Constrained
	}
	return ratios.Default
}

// validRequest is ParseRequest's contract, written out independently: it
// reports whether req must be accepted, and if not, why.
func validRequest(req *sparrowrpc.TSchedulingRequest, ratios Ratios) (bool, string) {
	if req == nil {
		return false, "is nil"
	}
	if req.App == "" || len(req.App) > maxAppBytes {
		return false, "has a missing or overlong app"
	}
	if len(req.Tasks) > maxTasksInJob {
		return false, "has too many tasks"
	}
	if req.RequestId != nil && len(*req.RequestId) > maxIDBytes {
		return false, "has an overlong request id"
	}
	if len(req.Constraints) > maxConstraints {
		return false, "has too many constraints"
	}
	for _, c := range req.Constraints {
		if c == nil || c.Key == "" {
			return false, "has a missing constraint or one without a key"
		}
		switch c.Op {
		case placement.OpExists:
		case placement.OpEq, placement.OpNe:
			if len(c.Values) == 0 {
				return false, "has a constraint without values"
			}
		default:
			return false, "has a constraint with an unknown operator"
		}
	}
	ids := make(map[string]bool, len(req.Tasks))
	for _, s := range req.Tasks {
		if s == nil || len(s.TaskId) > maxIDBytes || ids[s.TaskId] {
			return false, "has a missing, overlong or duplicate task"
		}
		ids[s.TaskId] = true
	}
	if r := wantRatio(req, ratios); math.IsNaN(r) || r < 1 || r > placement.MaxProbeRatio {
		return false, fmt.Sprintf("gets the bad probe ratio %v", r)
	}
	if req.FrontendAddress != nil && !validFrontendAddress(*req.FrontendAddress) {
		return false, "has a bad frontend address"
	}
	return true, ""
}

// validFrontendAddress is ParseFrontendAddress's contract, written out
// independently: host:port within maxIDBytes, a port in 1..65535 as
// strconv.Atoi reads it, and a host neither empty nor an unspecified IP.
func validFrontendAddress(addr string) bool {
	if len(addr) > maxIDBytes {
		return false
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil || host == "" {
		return false
	}
	if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 {
		return false
	}
	ip := net.ParseIP(host)
	return ip == nil || !(ip.Equal(net.IPv4zero) || ip.Equal(net.IPv6zero))
}

// checkJob checks an accepted request's Job.
func checkJob(t *testing.T, req *sparrowrpc.TSchedulingRequest, ratios Ratios, job Job) {
	t.Helper()
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("request %s accepted as %+v: "+format, append([]any{fingerprint(req), job}, args...)...)
	}
	if job.App == "" || job.App != req.App || len(job.App) > maxAppBytes {
		fail("app %q", job.App)
	}
	switch {
	case job.User == nil:
		fail("nil user")
	case req.User != nil && job.User != req.User:
		fail("user not the request's")
	case req.User == nil && *job.User != (sparrowrpc.TUserGroupInfo{}):
		fail("made-up user %+v", job.User)
	}
	wantID := ""
	if req.RequestId != nil {
		wantID = *req.RequestId
	}
	if job.RequestID != wantID || len(job.RequestID) > maxIDBytes {
		fail("request id %q, want %q", job.RequestID, wantID)
	}
	if len(job.Tasks) != len(req.Tasks) || len(job.Specs) != len(req.Tasks) || len(job.Tasks) > maxTasksInJob {
		fail("%d tasks and %d specs for %d requested", len(job.Tasks), len(job.Specs), len(req.Tasks))
	}
	ids := make(map[string]bool, len(job.Tasks))
	relax := job.Relax
	for i, task := range job.Tasks {
		spec := job.Specs[i]
		if spec == nil || spec != req.Tasks[i] {
			fail("spec %d is not the request's", i)
		}
		if task.ID != spec.TaskId || len(task.ID) > maxIDBytes || ids[task.ID] {
			fail("task %d id %q (spec %q): mismatched, overlong or duplicate", i, task.ID, spec.TaskId)
		}
		ids[task.ID] = true
		var nodes, racks []string
		if spec.Preference != nil {
			nodes, racks = spec.Preference.Nodes, spec.Preference.Racks
		}
		if !slices.Equal(task.Nodes, nodes) || !slices.Equal(task.Racks, racks) {
			fail("task %d placement %v/%v, want %v/%v", i, task.Nodes, task.Racks, nodes, racks)
		}
		// Relaxation: exactly the tasks with preferences and a positive
		// delayThreshold, in order; negative sizes are the default (-1).
		if p := spec.Preference; p != nil && (len(nodes) > 0 || len(racks) > 0) && p.DelayThreshold > 0 {
			want := Relaxation{Task: i, Delay: time.Duration(p.DelayThreshold) * time.Millisecond, InputBytes: -1}
			if p.InputBytes != nil && *p.InputBytes >= 0 {
				want.InputBytes = *p.InputBytes
			}
			if len(relax) == 0 || relax[0] != want {
				fail("task %d relaxation %v, want %+v first", i, relax, want)
			}
			relax = relax[1:]
		}
	}
	if len(relax) != 0 {
		fail("relaxation for tasks that did not opt in: %+v", relax)
	}
	if len(job.Constraints) != len(req.Constraints) || len(job.Constraints) > maxConstraints {
		fail("%d constraints for %d requested", len(job.Constraints), len(req.Constraints))
	}
	for i, c := range job.Constraints {
		rc := req.Constraints[i]
		if err := c.Validate(); err != nil {
			fail("constraint %d invalid: %v", i, err)
		}
		if c.Key != rc.Key || c.Op != rc.Op || !slices.Equal(c.Values, rc.Values) {
			fail("constraint %d is %v, not the request's", i, c)
		}
	}
	if want := req.GetFrontendAddress(); job.FrontendAddress != want {
		fail("frontend address %q, want %q", job.FrontendAddress, want)
	}
	if job.Constrained() != isConstrained(req) {
		fail("Constrained() = %v", job.Constrained())
	}
	r := job.ProbeRatio
	if math.IsNaN(r) || math.IsInf(r, 0) || r < 1 || r > placement.MaxProbeRatio {
		fail("probe ratio %v out of [1, %d]", r, placement.MaxProbeRatio)
	}
	if want := wantRatio(req, ratios); math.Float64bits(r) != math.Float64bits(want) {
		fail("probe ratio %v, want %v", r, want)
	}
	if err := placement.CheckProbeRatio(r); err != nil {
		fail("probe ratio: %v", err)
	}
}

// fingerprint renders every field of req, floats by their bits, so that
// two renderings differ exactly when the requests do (NaN included).
func fingerprint(req *sparrowrpc.TSchedulingRequest) string {
	if req == nil {
		return "<nil>"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "{app %q", req.App)
	if u := req.User; u != nil {
		fmt.Fprintf(&b, " user %q/%q/%d", u.User, u.Group, u.Priority)
	}
	if req.Description != nil {
		fmt.Fprintf(&b, " desc %q", *req.Description)
	}
	if req.ProbeRatio != nil {
		fmt.Fprintf(&b, " ratio %v(%#x)", *req.ProbeRatio, math.Float64bits(*req.ProbeRatio))
	}
	if req.RequestId != nil {
		fmt.Fprintf(&b, " rid %q", *req.RequestId)
	}
	fmt.Fprintf(&b, " tasks(%d)[", len(req.Tasks))
	for _, s := range req.Tasks {
		if s == nil {
			b.WriteString(" <nil>")
			continue
		}
		fmt.Fprintf(&b, " {%q %q", s.TaskId, s.Message)
		if p := s.Preference; p != nil {
			fmt.Fprintf(&b, " %q %q %d", p.Nodes, p.Racks, p.DelayThreshold)
			if p.InputBytes != nil {
				fmt.Fprintf(&b, " in %d", *p.InputBytes)
			}
		}
		b.WriteString("}")
	}
	fmt.Fprintf(&b, "] constraints(%d)[", len(req.Constraints))
	for _, c := range req.Constraints {
		if c == nil {
			b.WriteString(" <nil>")
			continue
		}
		fmt.Fprintf(&b, " {%q %q %q}", c.Key, c.Op, c.Values)
	}
	b.WriteString("]}")
	return b.String()
}
