package procs

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/apache/thrift/lib/go/thrift"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/sparrowfleet/sparrow/thrift/gen-go/sparrowrpc"
)

// The daemons' per-method call counters (internal/metrics.CallsCollector).
const (
	callsServedMetric = "sparrow_rpc_calls_served_total"
	callsMadeMetric   = "sparrow_rpc_calls_made_total"
)

// Calls are Thrift calls served and made, per method name.
type Calls struct {
	Served map[string]float64 `json:"served"`
	Made   map[string]float64 `json:"made"`
}

// parseCalls reads the per-method call counters from a Prometheus text
// exposition; a member that exposes none has no calls.
func parseCalls(r io.Reader) (Calls, error) {
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(r)
	if err != nil {
		return Calls{}, fmt.Errorf("parse /metrics: %w", err)
	}
	c := Calls{Served: map[string]float64{}, Made: map[string]float64{}}
	for name, into := range map[string]map[string]float64{callsServedMetric: c.Served, callsMadeMetric: c.Made} {
		mf := mfs[name]
		if mf == nil {
			continue
		}
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "method" {
					// Untyped when the exposition has no TYPE line.
					into[l.GetValue()] += m.GetCounter().GetValue() + m.GetUntyped().GetValue()
				}
			}
		}
	}
	return c, nil
}

// scrapeCalls reads every member's call counters from its /metrics, in
// members order; a member with no operator endpoint (an executor) gets
// none.
func scrapeCalls(ctx context.Context, members []*member) ([]Calls, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	out := make([]Calls, len(members))
	for i, m := range members {
		if m.http == "" {
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+m.http+"/metrics", nil)
		if err != nil {
			return nil, err
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			return nil, fmt.Errorf("%s /metrics: %w", m.name, err)
		}
		c, err := parseCalls(io.LimitReader(resp.Body, 16<<20))
		resp.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.name, err)
		}
		out[i] = c
	}
	return out, nil
}

// An executor serves no operator endpoint, but its only Thrift peer is
// its node monitor: it serves the BackendService calls its node monitor
// makes and makes the NodeMonitorService calls its node monitor serves.
// The node monitor's other peers, schedulers, use other methods.
var (
	backendMethods     = methodSet(sparrowrpc.NewExtendedBackendServiceProcessor(nil))
	nodeMonitorMethods = methodSet(sparrowrpc.NewNodeMonitorServiceProcessor(nil))
)

// methodSet is the names of proc's methods.
func methodSet(proc thrift.TProcessor) map[string]bool {
	set := map[string]bool{}
	for name := range proc.ProcessorMap() {
		set[name] = true
	}
	return set
}

// callCosts is each daemon role's calls per method between two scrapes
// (members order) per task; executors' are read off their node
// monitors'. With no tasks every figure is zero.
func callCosts(roles []Role, before, after []Calls, tasks int) map[Role]Calls {
	out := map[Role]Calls{}
	for _, role := range []Role{Scheduler, NodeMonitor, Executor} {
		out[role] = Calls{Served: map[string]float64{}, Made: map[string]float64{}}
	}
	if tasks <= 0 {
		return out
	}
	per := 1 / float64(tasks)
	add := func(into, after, before map[string]float64, keep func(string) bool) {
		for method, n := range after {
			if d := n - before[method]; d != 0 && keep(method) {
				into[method] += d * per
			}
		}
	}
	all := func(string) bool { return true }
	in := func(set map[string]bool) func(string) bool { return func(m string) bool { return set[m] } }
	for i, role := range roles {
		switch role {
		case Scheduler, NodeMonitor:
			add(out[role].Served, after[i].Served, before[i].Served, all)
			add(out[role].Made, after[i].Made, before[i].Made, all)
		}
		if role == NodeMonitor {
			add(out[Executor].Served, after[i].Made, before[i].Made, in(backendMethods))
			add(out[Executor].Made, after[i].Served, before[i].Served, in(nodeMonitorMethods))
		}
	}
	return out
}

// total sums calls over methods.
func total(calls map[string]float64) float64 {
	var sum float64
	for _, n := range calls {
		sum += n
	}
	return sum
}

// addCalls sets each role cost's calls per task from perTask.
func addCalls(costs []RoleCost, perTask map[Role]Calls) {
	for i := range costs {
		c, ok := perTask[costs[i].Role]
		if !ok {
			continue
		}
		costs[i].CallsServedPerTask, costs[i].CallsMadePerTask = total(c.Served), total(c.Made)
		costs[i].CallsPerTask = &c
	}
}
