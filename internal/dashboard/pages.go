package dashboard

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"image/color"
	"math"
	"net/http"

	"strings"
	"time"

	"github.com/sparrowfleet/sparrow/internal/httpapi"
	"github.com/sparrowfleet/sparrow/internal/membership"
	"github.com/sparrowfleet/sparrow/internal/plot"
)

// pages serves the dashboard's HTML and charts. It holds no state of its
// own: each request takes a view of the Dashboard under its lock.
type pages struct {
	d      *Dashboard
	prefix string
	mux    *http.ServeMux
}

func newPages(d *Dashboard, prefix string) *pages {
	if !strings.HasSuffix(prefix, "/") {
		prefix += "/"
	}
	p := &pages{d: d, prefix: prefix, mux: http.NewServeMux()}
	p.mux.HandleFunc("GET "+prefix+"{$}", p.overview)
	p.mux.HandleFunc("GET "+prefix+"node", p.node)
	p.mux.HandleFunc("GET "+prefix+"chart/{name}", p.chart)
	return p
}

func (p *pages) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// The page is read-only: it never changes the fleet.
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		http.Error(w, "the dashboard is read-only", http.StatusMethodNotAllowed)
		return
	}
	now := time.Now()
	p.d.Viewed(now)
	// The page shows the fleet from its first view: polled now if the
	// dashboard has no recent poll. The poll outlives a client that goes
	// away, so that it does not mark the members unreachable.
	p.d.current(context.WithoutCancel(r.Context()), now)
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	// Nothing is loaded from anywhere but this member.
	w.Header().Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'")
	p.mux.ServeHTTP(w, r)
}

// roleCount is one role's members by health.
type roleCount struct {
	Role     string
	Total    int
	ByHealth []healthCount
}

type healthCount struct {
	Health Health
	N      int
}

// cell is one node monitor in the grid.
type cell struct {
	Name, Title, Color, Class string
}

type userRow struct {
	User            string
	Running, Queued int
	Target          string
}

type schedRow struct {
	Name, Health, Version, Started string
	Tasks, Jobs, Delay             string
	Held                           int
	Refused                        string
}

type memberRow struct {
	Name, Role, Health, Reason, Version, Started, Gossip string
}

type overviewView struct {
	Prefix      string
	Refresh     int
	Polled      string
	Roles       []roleCount
	Versions    []string
	Cells       []cell
	Slots       int
	Running     int
	Free        int
	Queued      int
	Members     []memberRow
	Users       []userRow
	Schedulers  []schedRow
	Coordinator *httpapi.CoordinatorStatus
	Locality    [][2]string
	Racks       [][2]string
	HeldTotal   int
	Stamp       int64
}

func (p *pages) overview(w http.ResponseWriter, r *http.Request) {
	p.render(w, overviewPage, p.overviewView())
}

func (p *pages) overviewView() overviewView {
	d := p.d
	d.mu.Lock()
	defer d.mu.Unlock()
	v := overviewView{Prefix: p.prefix, Refresh: int(math.Max(1, d.cfg.Interval.Seconds())), Stamp: d.lastPoll.UnixMilli()}
	if !d.lastPoll.IsZero() {
		v.Polled = d.lastPoll.UTC().Format(time.RFC3339)
	}
	counts := map[string]map[Health]int{}
	versions := map[string]bool{}
	for _, name := range sortedKeys(d.members) {
		ms := d.members[name]
		role := string(ms.Role)
		if counts[role] == nil {
			counts[role] = map[Health]int{}
		}
		counts[role][ms.Health]++
		if ms.Version != "" {
			versions[ms.Version] = true
		}
		if ms.Role != membership.RoleNodeMonitor {
			v.Members = append(v.Members, memberRow{Name: ms.Name, Role: role, Health: string(ms.Health), Reason: ms.Reason,
				Version: orDash(ms.Version), Started: orDash(ms.Started), Gossip: ms.Gossip})
			continue
		}
		v.Cells = append(v.Cells, nodeCell(ms))
		v.Slots += ms.Slots
		if nm := ms.NodeMonitor; nm != nil {
			v.Running += nm.Running
			v.Free += nm.Free
			v.Queued += nm.Queued
		}
	}
	for _, role := range sortedKeys(counts) {
		rc := roleCount{Role: role}
		for _, h := range []Health{Ready, NotReady, Alive, Unreachable, Dead} {
			if n := counts[role][h]; n > 0 {
				rc.ByHealth = append(rc.ByHealth, healthCount{h, n})
				rc.Total += n
			}
		}
		v.Roles = append(v.Roles, rc)
	}
	v.Versions = sortedKeys(versions)
	for _, u := range sortedKeys(d.users) {
		last, ok := d.users[u].last()
		if !ok {
			continue
		}
		row := userRow{User: userName(u), Running: last.Running, Queued: last.Queued, Target: "-"}
		if last.HasTarget {
			row.Target = fmt.Sprintf("%.1f", last.Target)
		}
		v.Users = append(v.Users, row)
	}
	for _, name := range sortedKeys(d.scheds) {
		ms := d.members[name]
		last, _ := d.scheds[name].last()
		row := schedRow{Name: name, Health: string(ms.Health), Version: orDash(ms.Version), Started: orDash(ms.Started),
			Tasks: fmt.Sprintf("%.1f", last.TasksPerSec), Jobs: fmt.Sprintf("%.1f", last.JobsPerSec), Held: last.Held,
			Refused: fmt.Sprintf("%.2f", last.RefusedPerSec), Delay: "-"}
		if last.HasDelay {
			row.Delay = fmt.Sprintf("%.1f ms", last.DelaySeconds*1000)
		}
		v.HeldTotal += last.Held
		v.Schedulers = append(v.Schedulers, row)
	}
	if co := d.activeCoordinator(); co != nil {
		v.Coordinator = co
		if l := co.Locality; l != nil {
			v.Locality = [][2]string{
				{"version", fmt.Sprint(l.Version)}, {"solve", fmt.Sprintf("%.1f ms", l.SolveSeconds*1000)},
				{"nodes", fmt.Sprint(l.Nodes)}, {"cluster price", fmt.Sprint(l.Cluster)},
				{"rack price", fmt.Sprint(l.Rack)}, {"local price", fmt.Sprint(l.Local)}, {"core price", fmt.Sprint(l.Core)},
			}
			for _, rack := range sortedKeys(l.Racks) {
				v.Racks = append(v.Racks, [2]string{rack, fmt.Sprint(l.Racks[rack])})
			}
		}
	}
	return v
}

// nodeCell colours a node monitor by the share of its slots running
// tasks, from pale (idle) to dark blue (full); queued work on a full node
// turns it orange, and a node that is not ready is grey or red.
func nodeCell(ms *memberState) cell {
	c := cell{Name: ms.Name, Class: "cell h-" + strings.ReplaceAll(string(ms.Health), " ", "-")}
	nm := ms.NodeMonitor
	switch {
	case ms.Health == Dead || ms.Health == Unreachable:
		c.Color = "#d62728"
		c.Title = fmt.Sprintf("%s: %s (%s)", ms.Name, ms.Health, ms.Reason)
	case nm == nil:
		c.Color = "#bbbbbb"
		c.Title = fmt.Sprintf("%s: %s, %d slots", ms.Name, ms.Health, ms.Slots)
	default:
		frac := 0.0
		if nm.Slots > 0 {
			frac = math.Min(1, float64(nm.Running)/float64(nm.Slots))
		}
		if nm.Queued > 0 && nm.Free == 0 {
			c.Color = "#ff7f0e"
		} else {
			c.Color = blend(frac)
		}
		c.Title = fmt.Sprintf("%s: %d of %d slots running, %d free, %d queued", ms.Name, nm.Running, nm.Slots, nm.Free, nm.Queued)
	}
	return c
}

// blend is the colour of a node running frac of its slots.
func blend(frac float64) string {
	lo, hi := [3]float64{0xde, 0xeb, 0xf7}, [3]float64{0x08, 0x30, 0x6b}
	var rgb [3]int
	for i := range rgb {
		rgb[i] = int(lo[i] + (hi[i]-lo[i])*frac)
	}
	return fmt.Sprintf("#%02x%02x%02x", rgb[0], rgb[1], rgb[2])
}

type nodeView struct {
	Prefix  string
	Refresh int
	Found   bool
	M       memberRow
	Slots   int
	Apps    string
	NM      *httpapi.NodeMonitorStatus
	Users   []userRow
	Stamp   int64
}

func (p *pages) node(w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	d := p.d
	d.mu.Lock()
	v := nodeView{Prefix: p.prefix, Refresh: int(math.Max(1, d.cfg.Interval.Seconds())), Stamp: d.lastPoll.UnixMilli()}
	if ms := d.members[name]; ms != nil {
		v.Found = true
		v.M = memberRow{Name: ms.Name, Role: string(ms.Role), Health: string(ms.Health), Reason: ms.Reason,
			Version: orDash(ms.Version), Started: orDash(ms.Started), Gossip: ms.Gossip}
		v.Slots, v.Apps = ms.Slots, strings.Join(ms.Apps, ", ")
		if ms.NodeMonitor != nil {
			nm := *ms.NodeMonitor
			v.NM = &nm
			for _, u := range sortedKeys(nm.Users) {
				c := nm.Users[u]
				v.Users = append(v.Users, userRow{User: userName(u), Running: c.Running, Queued: c.Queued})
			}
		}
	}
	d.mu.Unlock()
	if !v.Found {
		w.WriteHeader(http.StatusNotFound)
	}
	p.render(w, nodePage, v)
}

func (p *pages) render(w http.ResponseWriter, t *template.Template, v any) {
	var buf bytes.Buffer
	if err := t.Execute(&buf, v); err != nil {
		http.Error(w, "render: "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Write(buf.Bytes())
}

// chart draws one of the history charts as SVG.
func (p *pages) chart(w http.ResponseWriter, r *http.Request) {
	c, ok := p.historyChart(r.PathValue("name"))
	if !ok {
		http.NotFound(w, r)
		return
	}
	var buf bytes.Buffer
	if err := c.Write(&buf, "svg"); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Write(buf.Bytes())
}

func (p *pages) historyChart(name string) (plot.Chart, bool) {
	d := p.d
	d.mu.Lock()
	defer d.mu.Unlock()
	now := d.lastPoll
	ago := func(t time.Time) float64 { return -now.Sub(t).Seconds() }
	c := plot.Chart{X: plot.Axis{Label: "seconds ago"}}
	switch name {
	case "users.svg":
		c.Title, c.Y.Label = "Work per user", "tasks"
		c.Subtitle = "running (solid), queued (dashed), coordinator target (rings)"
		for i, u := range sortedKeys(d.users) {
			r := d.users[u]
			col := plot.Palette[i%len(plot.Palette)]
			run, queued, target := series(r, ago, func(p userPoint) (float64, bool) { return float64(p.Running), true }),
				series(r, ago, func(p userPoint) (float64, bool) { return float64(p.Queued), true }),
				series(r, ago, func(p userPoint) (float64, bool) { return p.Target, p.HasTarget })
			c.Series = append(c.Series,
				plot.Series{Name: userName(u), Points: run, Color: col},
				plot.Series{Points: queued, Color: col, Dashed: true})
			if hasPoint(target) {
				c.Series = append(c.Series, plot.Series{Points: target, Color: col, NoLine: true, Marker: plot.Ring})
			}
		}
	case "throughput.svg":
		c.Title, c.Y.Label = "Tasks launched per second, per scheduler", "tasks/s"
		c.Series = schedSeries(d, ago, func(p schedPoint) (float64, bool) { return p.TasksPerSec, true })
	case "delay.svg":
		c.Title, c.Y.Label = "Mean scheduling delay, per scheduler", "ms"
		c.Subtitle = "submission to hand-out, over each interval's launches"
		c.Series = schedSeries(d, ago, func(p schedPoint) (float64, bool) { return p.DelaySeconds * 1000, p.HasDelay })
	case "held.svg":
		c.Title, c.Y.Label = "Submits held and refused on a saturated fleet", "calls, refusals/s"
		c.Subtitle = "held now (solid), refused per second (dashed)"
		held := schedSeries(d, ago, func(p schedPoint) (float64, bool) { return float64(p.Held), true })
		refused := schedSeries(d, ago, func(p schedPoint) (float64, bool) { return p.RefusedPerSec, true })
		for i := range refused {
			refused[i].Name, refused[i].Dashed = "", true
		}
		c.Series = append(held, refused...)
	default:
		return c, false
	}
	drawable := false
	for _, s := range c.Series {
		drawable = drawable || hasPoint(s.Points)
	}
	if !drawable {
		c.Notes = []string{"no data yet"}
		c.Series = []plot.Series{{Points: []plot.Point{{X: 0, Y: 0}}, NoLine: true, Color: color.Transparent}}
	}
	return c, true
}

func schedSeries(d *Dashboard, ago func(time.Time) float64, y func(schedPoint) (float64, bool)) []plot.Series {
	var out []plot.Series
	for i, name := range sortedKeys(d.scheds) {
		out = append(out, plot.Series{Name: name, Points: series(d.scheds[name], ago, y), Color: plot.Palette[i%len(plot.Palette)]})
	}
	return out
}

// series is r's points; a value that does not exist breaks the line.
func series[T interface{ at() time.Time }](r *ring[T], ago func(time.Time) float64, y func(T) (float64, bool)) []plot.Point {
	pts := make([]plot.Point, 0, r.len())
	for i := range r.len() {
		p := r.at(i)
		v, ok := y(p)
		if !ok {
			v = math.NaN()
		}
		pts = append(pts, plot.Point{X: ago(p.at()), Y: v})
	}
	return pts
}

func (p userPoint) at() time.Time  { return p.At }
func (p schedPoint) at() time.Time { return p.At }

func hasPoint(pts []plot.Point) bool {
	for _, p := range pts {
		if !math.IsNaN(p.Y) {
			return true
		}
	}
	return false
}

func userName(u string) string {
	if u == "" {
		return "(no user)"
	}
	return u
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
