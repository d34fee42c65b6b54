package coordinator

import (
	"fmt"
	"time"

	"github.com/sparrowfleet/sparrow/core/locality"
	"github.com/sparrowfleet/sparrow/core/placement"
	"github.com/sparrowfleet/sparrow/internal/fairgossip"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/pricegossip"
)

// LocalityStats describe the locality prices (Config.Locality): the last
// period's solve and the sends to schedulers so far.
type LocalityStats struct {
	// Version is the last priced version (0: none yet).
	Version uint64
	// Solve is how long the last snapshot, solve and encoding took; Nodes
	// and Racks what it covered; Arcs the flow network's size.
	Solve        time.Duration
	Nodes, Racks int
	Arcs         int
	// Local, Rack and Core count the queued tasks the last optimal flow
	// left on their node, moved within their rack and across the core.
	Local, Rack, Core int64
	// Cluster is the last cluster price.
	Cluster int64
	// Bytes is the size of the last prices message.
	Bytes int
	// Sent and Failed count prices messages sent to schedulers and sends
	// that failed or were skipped (the previous send to that scheduler
	// still under way), since the start; SentBytes the bytes sent.
	Sent, Failed uint64
	SentBytes    uint64
	// SolveFailed counts periods whose prices could not be computed.
	SolveFailed uint64
	// Overran counts periods skipped because the solve before them was
	// still running (a solve longer than the period); prices then come
	// every few periods, and the guidance loop is not delayed.
	Overran uint64
}

// priceFunc computes one locality period's outcome and encoded prices.
type priceFunc func(loads []locality.NodeLoad, p locality.Params, version uint64) (locality.Outcome, []byte, error)

// localityLoop prices locality every period while this coordinator is the
// active one, on its own goroutine, so that fair-share guidance never
// waits for a solve. It owns a locality.Pricer, which re-solves each
// period from what the previous one left (Config.price replaces it in
// tests). A tick that comes while a solve runs is dropped (time.Ticker
// drops ticks a slow receiver misses) and counted in
// LocalityStats.Overran.
func (d *Daemon) localityLoop() {
	defer d.loops.Done()
	price := priceFunc(d.cfg.price)
	if price == nil {
		pr, err := locality.NewPricer(d.cfg.LocalityParams) // Start validated the params
		if err != nil {
			d.log.Error().Err(err).Msg("locality prices off")
			return
		}
		price = func(loads []locality.NodeLoad, _ locality.Params, version uint64) (locality.Outcome, []byte, error) {
			return pricePeriod(pr, loads, version)
		}
	}
	t := time.NewTicker(d.cfg.Period)
	defer t.Stop()
	for {
		select {
		case <-d.stop:
			return
		case now := <-t.C:
			if active, _ := d.Cluster.ActiveCoordinator(); active != d.Cluster.Name() {
				continue
			}
			d.priceLocality(now, price)
			if over := time.Since(now) / d.cfg.Period; over > 0 {
				d.mu.Lock()
				d.loc.Overran += uint64(over)
				d.mu.Unlock()
			}
		}
	}
}

// localitySnapshot turns the fresh reports into the flow's node loads. A
// report without a rack takes the rack its node monitor advertises in
// gossip metadata (node monitors built before reports carried it).
func localitySnapshot(reports map[string]fairgossip.Report, attrs map[string]map[string]string) []locality.NodeLoad {
	out := make([]locality.NodeLoad, 0, len(reports))
	for node, r := range reports {
		l := locality.NodeLoad{Name: node, Rack: r.Rack, Slots: int(min(r.Slots, 1<<20)), TaskMillis: int64(min(r.TaskMillis, 1<<40))}
		if l.Rack == "" {
			l.Rack = attrs[node][placement.RackAttr]
		}
		for _, u := range r.Users {
			l.Queued += int(min(u.Queued, 1<<20))
			l.Running += int(min(u.Running, 1<<20))
		}
		out = append(out, l)
	}
	return out
}

// PriceLocality is one locality period's computation on a new Pricer
// (as the coordinator's first period): solve the flow over the node loads
// and encode version of the prices. It is the period without the sends,
// for tests and benchmarks.
func PriceLocality(loads []locality.NodeLoad, p locality.Params, version uint64) (locality.Outcome, []byte, error) {
	pr, err := locality.NewPricer(p)
	if err != nil {
		return locality.Outcome{}, nil, fmt.Errorf("locality prices: %w", err)
	}
	return pricePeriod(pr, loads, version)
}

// pricePeriod prices the node loads with pr, re-solving from its previous
// period, and encodes version of the prices.
func pricePeriod(pr *locality.Pricer, loads []locality.NodeLoad, version uint64) (locality.Outcome, []byte, error) {
	out, err := pr.Price(loads)
	if err != nil {
		return locality.Outcome{}, nil, fmt.Errorf("locality prices: %w", err)
	}
	out.Prices.Version = version
	b, err := pricegossip.Encode(out.Prices)
	if err != nil {
		return locality.Outcome{}, nil, fmt.Errorf("encoding locality prices: %w", err)
	}
	return out, b, nil
}

// priceLocality runs the active coordinator's locality period: it prices
// the live node monitors' fresh reports and sends the prices to every
// live scheduler. Called on the locality loop; it reads the reports under
// d.mu and skips those older than reportsKept periods itself, since the
// guidance loop that drops them runs concurrently.
func (d *Daemon) priceLocality(now time.Time, price priceFunc) {
	attrs := map[string]map[string]string{}
	for _, m := range d.Cluster.Members(membership.RoleNodeMonitor) {
		attrs[m.Name] = m.Meta.Attrs
	}
	d.mu.Lock()
	reports := make(map[string]fairgossip.Report, len(d.reports))
	for node, rc := range d.reports {
		if _, live := attrs[node]; live && now.Sub(rc.at) <= reportsKept*d.cfg.Period {
			reports[node] = rc.r
		}
	}
	version := max(uint64(now.UnixNano()), d.loc.Version+1)
	d.mu.Unlock()

	start := time.Now()
	loads := localitySnapshot(reports, attrs)
	out, msg, err := price(loads, d.cfg.LocalityParams, version)
	solve := time.Since(start)
	if err != nil {
		d.mu.Lock()
		d.loc.SolveFailed++
		d.mu.Unlock()
		d.log.Error().Err(err).Int("nodes", len(loads)).Msg("locality prices not computed")
		return
	}
	d.mu.Lock()
	d.loc.Version, d.loc.Solve, d.loc.Nodes, d.loc.Racks, d.loc.Arcs = version, solve, len(loads), len(out.Prices.Rack), out.Arcs
	d.loc.Local, d.loc.Rack, d.loc.Core, d.loc.Cluster, d.loc.Bytes = out.Local, out.Rack, out.Core, out.Prices.Cluster, len(msg)
	d.mu.Unlock()
	var measured, sum int64
	for _, l := range loads {
		if l.TaskMillis > 0 {
			measured, sum = measured+1, sum+l.TaskMillis
		}
	}
	if measured > 0 {
		sum /= measured
	}
	d.recordLocality(version, now, len(loads), sum, out) // for /status (status.go)
	d.sendPrices(msg)
}

// sendPrices sends msg to every live scheduler over a reliable stream,
// each on its own goroutine so that a slow or dead scheduler delays
// neither the others nor the next period. A scheduler whose previous send
// has not finished is skipped this period (counted as failed), so sends
// to a dead member never pile up.
func (d *Daemon) sendPrices(msg []byte) {
	for _, m := range d.Cluster.Members(membership.RoleScheduler) {
		name := m.Name
		d.mu.Lock()
		busy := d.sending[name]
		if busy {
			d.loc.Failed++
		} else {
			d.sending[name] = true
		}
		d.mu.Unlock()
		if busy {
			continue
		}
		d.sends.Add(1)
		go func() {
			defer d.sends.Done()
			err := d.Cluster.SendTo(name, msg)
			d.mu.Lock()
			delete(d.sending, name)
			if err != nil {
				d.loc.Failed++
			} else {
				d.loc.Sent++
				d.loc.SentBytes += uint64(len(msg))
			}
			d.mu.Unlock()
			if err != nil {
				d.log.Debug().Err(err).Str("scheduler", name).Msg("locality prices not sent")
			}
		}()
	}
}
