package guidance

import (
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/sparrowfleet/sparrow/coordinator"
	"github.com/sparrowfleet/sparrow/core/fairshare"
	"github.com/sparrowfleet/sparrow/internal/fairgossip"
)

// Size is one fleet size of the benchmark.
type Size struct{ Nodes, Types, Users int }

// Config is the benchmark's workload and gossip settings, the same for
// every size.
type Config struct {
	// Periods are measured per size, after fairgossip.Warmup periods.
	Periods int
	// Slots per node.
	Slots int
	// Churn is the fraction of users whose work changes each period.
	Churn float64
	// RetransmitMult is memberlist's RetransmitMult.
	RetransmitMult int
	// SnapshotEvery and TableEvery are the publisher's periods between
	// snapshots and between resends of the name table.
	SnapshotEvery, TableEvery int
	// GossipPeriods are the 1 s periods of the real gossip measurement.
	GossipPeriods int
	// Seed seeds the synthetic reports.
	Seed uint64
}

// Validate names the first setting out of range.
func (c Config) Validate() error {
	switch {
	case c.Periods < 1:
		return fmt.Errorf("--periods must be at least 1")
	case c.Churn < 0 || c.Churn > 1:
		return fmt.Errorf("--churn must be in [0, 1]")
	case c.RetransmitMult < 1:
		return fmt.Errorf("--retransmit-mult must be at least 1")
	}
	return nil
}

// ParseSizes parses --sizes: nodes:types:users, comma separated.
func ParseSizes(s string) ([]Size, error) {
	var out []Size
	for _, f := range strings.Split(s, ",") {
		parts := strings.Split(strings.TrimSpace(f), ":")
		if len(parts) != 3 {
			return nil, fmt.Errorf("--sizes: %q is not nodes:types:users", f)
		}
		var n [3]int
		for i, p := range parts {
			v, err := strconv.Atoi(p)
			if err != nil || v < 1 {
				return nil, fmt.Errorf("--sizes: %q: %q is not a positive integer", f, p)
			}
			n[i] = v
		}
		if n[1] > n[0] {
			return nil, fmt.Errorf("--sizes: %q has more types than nodes", f)
		}
		out = append(out, Size{n[0], n[1], n[2]})
	}
	return out, nil
}

// Result is one size's row.
type Result struct {
	Size
	// Periods measured (after fairgossip.Warmup periods).
	Periods int `json:"periods"`
	// CPU per period, measured (getrusage, whole process): the CMMF solve
	// and the encoding.
	SolveCPUMs  float64 `json:"solve_cpu_ms"`
	EncodeCPUMs float64 `json:"encode_cpu_ms"`
	// Sizes, measured (encoded bytes).
	TableBytes    int `json:"table_bytes"`
	TableChunks   int `json:"table_chunks"`
	SnapshotBytes int `json:"snapshot_bytes"`
	SnapChunks    int `json:"snapshot_chunks"`
	DeltaBytes    int `json:"delta_bytes_mean"`
	DeltaChunks   int `json:"delta_chunks_mean"`
	// MeanBytes is the mean bytes per period with snapshots every
	// SnapshotEvery and the table every TableEvery periods.
	MeanBytes float64 `json:"mean_bytes_per_period"`
	// V1Bytes is the retired format's size for the same guidance
	// (computed from its layout: names and float32s in every entry).
	V1Bytes int `json:"v1_bytes"`
	// Computed from memberlist's rule: every member sends every message
	// RetransmitLimit times, each costing its length + 3 bytes of
	// memberlist framing.
	Members         int     `json:"members"`
	RetransmitLimit int     `json:"retransmit_limit"`
	GossipBps       float64 `json:"gossip_bytes_per_s_per_member"`
	// CapacityBps is what memberlist's LAN timing can piggyback per
	// member (3 gossip targets every 200 ms, 1,398 bytes each; pings add
	// a little); GossipBps above it cannot be carried.
	CapacityBps float64 `json:"lan_gossip_capacity_bytes_per_s"`
	// Direct delivery (coordinator --delivery direct): each node's reply
	// encoded with coordinator.Replies, measured on the last period:
	// bytes and messages summed over nodes, per node mean and max; its
	// CPU per period measured (mean over the measured periods; direct
	// delivery replaces the gossip encoding, the solve stays).
	DirectBytes         int     `json:"direct_reply_bytes_per_period"`
	DirectMsgs          int     `json:"direct_reply_messages_per_period"`
	DirectNodeMeanBytes float64 `json:"direct_reply_bytes_per_node_mean"`
	DirectNodeMaxBytes  int     `json:"direct_reply_bytes_per_node_max"`
	DirectEncodeCPUMs   float64 `json:"direct_encode_cpu_ms"`
	// DirectCoordBps is what the coordinator sends per second for the
	// replies at a 1 s period, computed: bytes + 6 bytes of memberlist
	// framing (message type and CRC) per message; UDP/IP headers and
	// encryption not counted.
	DirectCoordBps float64 `json:"direct_coordinator_bytes_per_s"`
	// Gossip is the real measurement, when run.
	Gossip *GossipResult `json:"gossip,omitempty"`
}

// lanCapacity is memberlist's LAN gossip budget per member and second.
const lanCapacity = fairgossip.LANGossipBudget

// synthReports makes a period's reports: nodes round robin over types, each
// user with work on 4 nodes of each of 1-3 random types.
func synthReports(sz Size, slots int, rng *rand.Rand) []fairshare.NodeReport {
	out := make([]fairshare.NodeReport, sz.Nodes)
	byType := make([][]int, sz.Types)
	for i := range out {
		out[i] = fairshare.NodeReport{Node: fmt.Sprintf("nm-%05d", i), Type: fmt.Sprintf("type-%03d", i%sz.Types), Slots: slots, Users: map[string]fairshare.Usage{}}
		byType[i%sz.Types] = append(byType[i%sz.Types], i)
	}
	for u := range sz.Users {
		name := fmt.Sprintf("user-%05d", u)
		for range 1 + rng.IntN(3) {
			ns := byType[rng.IntN(sz.Types)]
			for range 4 {
				n := ns[rng.IntN(len(ns))]
				x := out[n].Users[name]
				x.Queued += 1 + rng.IntN(4)
				x.Running += rng.IntN(3)
				out[n].Users[name] = x
			}
		}
	}
	return out
}

// churn changes the work of a fraction of users on one of their nodes.
func churn(reports []fairshare.NodeReport, users []string, where map[string][]int, frac float64, rng *rand.Rand) {
	n := int(math.Round(frac * float64(len(users))))
	for _, i := range rng.Perm(len(users))[:n] {
		u := users[i]
		ns := where[u]
		node := ns[rng.IntN(len(ns))]
		x := reports[node].Users[u]
		x.Running = max(0, x.Running+rng.IntN(5)-2)
		x.Queued = max(0, x.Queued+rng.IntN(5)-2)
		if x.Queued+x.Running == 0 {
			x.Queued = 1
		}
		reports[node].Users[u] = x
	}
}

func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// synthWorkload draws one size's synthetic node reports (seeded by the
// size), and indexes them: the reports each user appears in, and the
// users in name order. rng, having drawn them, goes on to draw the churn.
func synthWorkload(sz Size, cfg Config) (reports []fairshare.NodeReport, where map[string][]int, users []string, rng *rand.Rand) {
	rng = rand.New(rand.NewPCG(cfg.Seed, uint64(sz.Nodes)))
	reports = synthReports(sz, cfg.Slots, rng)
	where = map[string][]int{}
	for i, r := range reports {
		for u := range r.Users {
			where[u] = append(where[u], i)
		}
	}
	users = make([]string, 0, len(where))
	for u := range where {
		users = append(users, u)
	}
	sort.Strings(users)
	return reports, where, users, rng
}

// Measure drives the coordinator's publish path (coordinator.Solve and
// coordinator.Encode, as coordinator.Guide runs them) for one size with
// synthetic reports and measures its CPU per period and its encodings.
func Measure(sz Size, cfg Config) (Result, error) {
	reports, where, users, rng := synthWorkload(sz, cfg)
	unit := func(string) float64 { return 1 }
	pub := &fairgossip.Publisher{SnapshotEvery: cfg.SnapshotEvery, TableEvery: cfg.TableEvery}
	res := Result{Size: sz, Periods: cfg.Periods, Members: sz.Nodes + 1}
	var solve, encode, direct time.Duration
	var deltaBytes, deltaChunks, deltas int
	var last fairshare.Guidance
	var lastPub fairgossip.Publication
	for p := range fairgossip.Warmup + cfg.Periods {
		if p > 0 {
			churn(reports, users, where, cfg.Churn, rng)
		}
		c0 := cpuNow()
		g, err := coordinator.Solve(reports, unit)
		if err != nil {
			return res, err
		}
		c1 := cpuNow()
		out, err := coordinator.Encode(pub, uint64(1+p), g)
		if err != nil {
			return res, err
		}
		c2 := cpuNow()
		if p < fairgossip.Warmup {
			continue
		}
		replies, err := coordinator.Replies(reports, g, uint64(1+p))
		if err != nil {
			return res, err
		}
		c3 := cpuNow()
		solve += c1 - c0
		encode += c2 - c1
		direct += c3 - c2
		directReplies(&res, replies)
		tb := 0
		for _, m := range out.Table {
			tb += len(m.Bytes)
		}
		if tb > 0 {
			res.TableBytes, res.TableChunks = tb, len(out.Table)
		}
		gb := out.Bytes() - tb
		if out.Base == 0 {
			res.SnapshotBytes, res.SnapChunks = gb, len(out.Guidance)
		} else {
			deltaBytes += gb
			deltaChunks += len(out.Guidance)
			deltas++
		}
		last, lastPub = g, out
	}
	if res.TableBytes == 0 || res.SnapshotBytes == 0 {
		// Steady periods resend neither within the window: take them from
		// a fresh publisher on the last period's guidance.
		full, err := coordinator.Encode(&fairgossip.Publisher{}, lastPub.Version, last)
		if err != nil {
			return res, err
		}
		tb := 0
		for _, m := range full.Table {
			tb += len(m.Bytes)
		}
		res.TableBytes, res.TableChunks = tb, len(full.Table)
		res.SnapshotBytes, res.SnapChunks = full.Bytes()-tb, len(full.Guidance)
	}
	res.SolveCPUMs = float64(solve) / float64(cfg.Periods) / 1e6
	res.EncodeCPUMs = float64(encode) / float64(cfg.Periods) / 1e6
	if deltas > 0 {
		res.DeltaBytes, res.DeltaChunks = deltaBytes/deltas, int(math.Ceil(float64(deltaChunks)/float64(deltas)))
	}
	se, te := float64(max(cfg.SnapshotEvery, 1)), float64(max(cfg.TableEvery, 1))
	res.MeanBytes = float64(res.SnapshotBytes)/se + float64(res.DeltaBytes)*(se-1)/se + float64(res.TableBytes)/te
	// Framing per message: memberlist's user message type byte and the
	// compound message's 2-byte length.
	chunks := float64(res.SnapChunks)/se + float64(res.DeltaChunks)*(se-1)/se + float64(res.TableChunks)/te
	res.RetransmitLimit = cfg.RetransmitMult * int(math.Ceil(math.Log10(float64(res.Members+1))))
	res.GossipBps = (res.MeanBytes + 3*chunks) * float64(res.RetransmitLimit)
	res.CapacityBps = lanCapacity
	res.V1Bytes = v1Size(last)
	res.DirectEncodeCPUMs = float64(direct) / float64(cfg.Periods) / 1e6
	res.DirectCoordBps = float64(res.DirectBytes + 6*res.DirectMsgs)
	return res, nil
}

// v1Size is the retired guidance format's size: per user its name,
// uvarint running count and float32 target; per weight its type and user
// names and a float32; 1,200-byte chunks with a ~20-byte header.
func v1Size(g fairshare.Guidance) int {
	n := 0
	for u := range g.Target {
		n += 1 + len(u) + uvarintLen(uint64(g.Running[u])) + 4
	}
	for t, ws := range g.TypeWeights {
		for u := range ws {
			n += 1 + len(t) + 1 + len(u) + 4
		}
	}
	return n + 20*int(math.Ceil(float64(n)/1180))
}

// directReplies records one period's direct replies in res.
func directReplies(res *Result, replies []coordinator.NodeReply) {
	res.DirectBytes, res.DirectMsgs, res.DirectNodeMaxBytes = 0, 0, 0
	for _, r := range replies {
		n := 0
		for _, m := range r.Msgs {
			n += len(m)
		}
		res.DirectBytes += n
		res.DirectMsgs += len(r.Msgs)
		res.DirectNodeMaxBytes = max(res.DirectNodeMaxBytes, n)
	}
	if len(replies) > 0 {
		res.DirectNodeMeanBytes = float64(res.DirectBytes) / float64(len(replies))
	}
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}

// Print prints the results as a table, with what each column measured
// or computed.
func Print(w io.Writer, rs []Result, cfg Config) {
	fmt.Fprintf(w, "churn %.0f%% of users per period; snapshot every %d periods, name table every %d; RetransmitMult %d\n",
		100*cfg.Churn, cfg.SnapshotEvery, cfg.TableEvery, cfg.RetransmitMult)
	fmt.Fprintf(w, "%7s %6s %6s | %9s %9s | %13s %13s %11s %10s %9s | %6s %12s %12s | %9s %11s %8s %9s %9s %12s\n",
		"nodes", "types", "users", "solve ms", "encode ms", "table B(ch)", "snapshot B", "delta B", "mean B/p", "v1 B",
		"limit", "gossip B/s", "LAN cap B/s", "direct ms", "direct B/p", "msgs/p", "node mean", "node max", "coord B/s")
	for _, r := range rs {
		fmt.Fprintf(w, "%7d %6d %6d | %9.2f %9.2f | %8d(%3d) %8d(%3d) %6d(%3d) %10.0f %9d | %6d %12.0f %12.0f | %9.2f %11d %8d %9.0f %9d %12.0f\n",
			r.Nodes, r.Types, r.Users, r.SolveCPUMs, r.EncodeCPUMs, r.TableBytes, r.TableChunks, r.SnapshotBytes, r.SnapChunks,
			r.DeltaBytes, r.DeltaChunks, r.MeanBytes, r.V1Bytes, r.RetransmitLimit, r.GossipBps, r.CapacityBps,
			r.DirectEncodeCPUMs, r.DirectBytes, r.DirectMsgs, r.DirectNodeMeanBytes, r.DirectNodeMaxBytes, r.DirectCoordBps)
	}
	fmt.Fprintln(w, "solve/encode: measured CPU per period (getrusage); sizes: measured; gossip B/s per member: computed (mean B/p + 3 B framing per message) x limit per 1 s period")
	fmt.Fprintln(w, "direct (--delivery direct): encode CPU measured; B/p, msgs, per node mean/max: measured encoded replies of the last period; coord B/s: computed (B/p + 6 B memberlist framing per message) at a 1 s period, UDP/IP headers not counted")
	for _, r := range rs {
		if g := r.Gossip; g != nil {
			fmt.Fprintf(w, "real gossip, %d members (%d measured periods of 1 s): sent %0.f B/s per member (guidance %.0f B/s, memberlist's own %.0f B/s); %.0f%% of (member, version) pairs installed; %.0f%% of members hold guidance newer than %d periods at the end\n",
				g.Members, g.Periods, g.TotalBps, g.GuidanceBps, g.TotalBps-g.GuidanceBps, 100*g.InstalledFrac, 100*g.FreshFrac, g.StaleAfter)
		}
	}
}
