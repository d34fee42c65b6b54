package overload

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/sparrowfleet/sparrow/bench/procs"
	"github.com/sparrowfleet/sparrow/internal/httpapi"
)

// fetchTimeout bounds one endpoint read; a member that does not answer in
// time leaves that value unknown in the sample.
const fetchTimeout = 2 * time.Second

// sampler reads every process's /proc and the members' endpoints.
type sampler struct {
	fleet   *procs.Fleet
	members []procs.MemberInfo
	pids    []int // members' then the driver's
	start   time.Time
	dir     string // where heap profiles go
}

// The scheduler metrics a sample sums.
const (
	mHeld      = "sparrow_scheduler_held_calls"
	mHolds     = "sparrow_scheduler_holds_total"
	mRefused   = "sparrow_scheduler_saturation_refusals_total"
	mAccepted  = "sparrow_scheduler_tasks_submitted_total"
	mHoldCount = "sparrow_scheduler_hold_seconds_count"
	mHoldSum   = "sparrow_scheduler_hold_seconds_sum"
)

// run samples at 0 and every cfg.SampleEvery up to cfg.Duration (the last
// sample at Duration), and prints a progress line every 10 samples. It
// fails if a member exits.
func (s *sampler) run(ctx context.Context, cfg Config) ([]Sample, error) {
	var out []Sample
	end := s.start.Add(cfg.Duration)
	lastSay := 0.0
	profiled := false
	for k := 0; ; k++ {
		at := s.start.Add(time.Duration(k) * cfg.SampleEvery)
		if at.After(end) {
			at = end
		}
		select {
		case <-ctx.Done():
			return out, ctx.Err()
		case <-time.After(time.Until(at)):
		}
		if err := s.fleet.Alive(); err != nil {
			return out, err
		}
		out = append(out, s.sample(ctx))
		t := out[len(out)-1].T
		if cfg.HeapProfiles && (!profiled && t >= cfg.Settle.Seconds() || !at.Before(end)) {
			when := "end"
			if !profiled {
				when, profiled = "settle", true
			}
			if err := s.heapProfiles(ctx, when); err != nil {
				cfg.say("heap profile not saved: %v", err)
			}
		}
		if t-lastSay >= 10 || !at.Before(end) {
			cfg.say("%s", progressLine(out, t-10, t, s.pids, s.members))
			lastSay = t
		}
		if !at.Before(end) {
			return out, nil
		}
	}
}

// Go runtime metrics read from every member that serves /metrics.
const (
	mGoroutines = "go_goroutines"
	mHeapInuse  = "go_memstats_heap_inuse_bytes"
	mConns      = "sparrow_rpc_connections_open"
)

// sample takes one Sample.
func (s *sampler) sample(ctx context.Context) Sample {
	n := len(s.pids)
	sm := Sample{T: time.Since(s.start).Seconds(), RSS: make([]int64, n), Peak: make([]int64, n), CPU: make([]float64, n),
		Heap: make([]int64, n), Goroutines: make([]int64, n), Conns: make([]int64, n)}
	for i, pid := range s.pids {
		sm.Heap[i], sm.Goroutines[i], sm.Conns[i] = unknown, unknown, unknown
		u, err := procs.ReadUsage(pid)
		if err != nil {
			sm.RSS[i], sm.Peak[i], sm.CPU[i] = unknown, unknown, unknown
			continue
		}
		sm.RSS[i], sm.Peak[i], sm.CPU[i] = u.RSS, u.PeakRSS, u.CPU.Seconds()
	}
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	// read is one member's endpoints: its /status and /metrics.
	type read struct {
		st      httpapi.Status
		metrics map[string]float64
		ok      bool
	}
	var wg sync.WaitGroup
	reads := make([]read, len(s.members))
	for i, mi := range s.members {
		if mi.HTTP == "" {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, err := s.fleet.Status(ctx, i)
			if err != nil {
				return
			}
			body, err := get(ctx, "http://"+mi.HTTP+"/metrics")
			if err != nil {
				return
			}
			reads[i] = read{st: st, ok: true, metrics: PromValues(body,
				mGoroutines, mHeapInuse, mConns, mHeld, mHolds, mRefused, mAccepted, mHoldCount, mHoldSum)}
		}()
	}
	wg.Wait()
	sm.View = unknown
	allNM, allSched := true, true
	for i, mi := range s.members {
		r := reads[i]
		if r.ok {
			sm.Heap[i], sm.Goroutines[i], sm.Conns[i] = int64(r.metrics[mHeapInuse]), int64(r.metrics[mGoroutines]), int64(r.metrics[mConns])
		}
		switch mi.Role {
		case procs.NodeMonitor:
			if !r.ok || r.st.NodeMonitor == nil {
				allNM = false
				continue
			}
			nm := r.st.NodeMonitor
			sm.Completed += float64(nm.Launches) - float64(nm.Running)
			sm.Running += float64(nm.Running)
			sm.Queued += float64(nm.Queued)
		case procs.Scheduler:
			if !r.ok || r.st.Scheduler == nil {
				allSched = false
				continue
			}
			if v := r.st.Scheduler.NodeMonitors; sm.View < 0 || v < sm.View {
				sm.View = v
			}
			sm.Held += r.metrics[mHeld]
			sm.Holds += r.metrics[mHolds]
			sm.Refusals += r.metrics[mRefused]
			sm.Accepted += r.metrics[mAccepted]
			sm.HoldCount += r.metrics[mHoldCount]
			sm.HoldSeconds += r.metrics[mHoldSum]
		}
	}
	if !allNM {
		sm.Completed, sm.Running, sm.Queued = unknown, unknown, unknown
	}
	if !allSched {
		sm.Held, sm.Holds, sm.Refusals, sm.Accepted, sm.HoldCount, sm.HoldSeconds = unknown, unknown, unknown, unknown, unknown, unknown
	}
	return sm
}

// heapProfiles saves the heap profile of the first scheduler and the
// first node monitor as NAME.heap-WHEN.pprof.
func (s *sampler) heapProfiles(ctx context.Context, when string) error {
	var errs []error
	for _, role := range []procs.Role{procs.Scheduler, procs.NodeMonitor} {
		for _, mi := range s.members {
			if mi.Role != role {
				continue
			}
			body, err := get(ctx, "http://"+mi.HTTP+"/debug/pprof/heap")
			if err == nil {
				err = os.WriteFile(filepath.Join(s.dir, mi.Name+".heap-"+when+".pprof"), body, 0o644)
			}
			if err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", mi.Name, err))
			}
			break
		}
	}
	return errors.Join(errs...)
}

// get fetches url's body.
func get(ctx context.Context, url string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	// Uncompressed: a gzip writer per scrape (promhttp's) would add the
	// benchmark's own allocations to the members' heaps.
	req.Header.Set("Accept-Encoding", "identity")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(io.LimitReader(resp.Body, 4<<20))
}

// progressLine says how the point is going over [from, to]: goodput,
// queued reservations, held calls and the largest RSS of each role.
func progressLine(samples []Sample, from, to float64, pids []int, members []procs.MemberInfo) string {
	last := samples[len(samples)-1]
	line := fmt.Sprintf("t=%.0fs", last.T)
	if r, ok := WindowRate(samples, from, to, func(s Sample) float64 { return s.Completed }); ok {
		line += fmt.Sprintf(" completed %.1f tasks/s", r)
	}
	line += fmt.Sprintf(" busy slots=%.0f queued=%.0f held=%.0f refused=%.0f view=%d RSS MiB:", last.Running, last.Queued, last.Held, last.Refusals, last.View)
	roleOf := func(i int) procs.Role {
		if i < len(members) {
			return members[i].Role
		}
		return procs.Frontend
	}
	for _, role := range procs.Roles {
		var most int64 = unknown
		for i := range pids {
			if roleOf(i) == role && i < len(last.RSS) {
				most = max(most, last.RSS[i])
			}
		}
		if most >= 0 {
			line += fmt.Sprintf(" %s %.1f", role, float64(most)/mib)
		}
	}
	return line
}
