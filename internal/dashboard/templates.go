package dashboard

import (
	"fmt"
	"html/template"
	"strings"
)

// layout is every page's frame: the style, and the script that swaps in
// the next rendering of #content every Refresh seconds (without it, the
// noscript refresh reloads the page).
const layout = `{{define "top"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<title>{{block "title" .}}sparrowfleet{{end}}</title>
<noscript><meta http-equiv="refresh" content="{{.Refresh}}"></noscript>
<style>
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;margin:0;color:#222;background:#fafafa}
header{background:#08306b;color:#fff;padding:.6em 1.2em;display:flex;gap:1.5em;align-items:baseline}
header a{color:#fff}
header .stale{background:#d62728;padding:0 .5em;border-radius:3px}
main{padding:0 1.2em 2em}
section{background:#fff;border:1px solid #ddd;border-radius:4px;margin:1em 0;padding:.4em 1em}
h2{font-size:1.05em;margin:.5em 0}
table{border-collapse:collapse;font-size:.9em}
td,th{padding:.15em .7em;text-align:left;border-bottom:1px solid #eee}
th{font-weight:600}
.num{text-align:right;font-variant-numeric:tabular-nums}
.grid{display:flex;flex-wrap:wrap;gap:2px;max-width:100%}
.cell{display:block;width:14px;height:14px;border-radius:2px}
.h-dead,.h-unreachable{outline:2px solid #7f0000}
.legend span{display:inline-block;width:12px;height:12px;margin:0 .3em 0 1em;vertical-align:middle;border-radius:2px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(520px,1fr));gap:.5em}
.charts img{width:100%;height:auto}
.health-ready{color:#2ca02c}.health-dead,.health-unreachable{color:#d62728;font-weight:600}.health-not-ready{color:#ff7f0e}
</style></head><body>
<header><strong>sparrowfleet</strong><a href="{{.Prefix}}">fleet</a><span id="polled" data-stamp="{{.Stamp}}"></span><span id="stale" class="stale" hidden>stale: the dashboard did not answer</span></header>
<main id="content">{{end}}
{{define "bottom"}}</main>
<script>
(function(){
  var every = {{.Refresh}} * 1000;
  function tick(){
    fetch(location.href, {cache: "no-store"}).then(function(r){
      if (!r.ok && r.status !== 404) { throw new Error(r.status); }
      return r.text();
    }).then(function(html){
      var doc = new DOMParser().parseFromString(html, "text/html");
      var next = doc.getElementById("content");
      if (next) { document.getElementById("content").replaceWith(next); }
      var polled = doc.getElementById("polled");
      if (polled) { document.getElementById("polled").replaceWith(polled); }
      document.getElementById("stale").hidden = true;
    }).catch(function(){
      document.getElementById("stale").hidden = false;
    }).finally(function(){ setTimeout(tick, every); });
  }
  setTimeout(tick, every);
})();
</script></body></html>{{end}}`

const overviewHTML = `{{template "top" .}}
<section id="summary"><h2>Members</h2>
<table><tr><th>role</th><th class="num">members</th><th>health</th></tr>
{{range .Roles}}<tr class="role" data-role="{{.Role}}"><td>{{.Role}}</td><td class="num">{{.Total}}</td><td>{{range .ByHealth}}<span class="health-{{cls .Health}}">{{.N}} {{.Health}}</span> {{end}}</td></tr>
{{else}}<tr><td colspan="3">no member seen yet</td></tr>{{end}}
</table>
{{if gt (len .Versions) 1}}<p id="mixed-versions"><strong>Mixed versions:</strong> {{range .Versions}}{{.}} {{end}}</p>{{end}}
{{if .Members}}<table id="members"><tr><th>name</th><th>role</th><th>health</th><th>version</th><th>started</th><th>gossip</th></tr>
{{range .Members}}<tr class="member" data-name="{{.Name}}" data-health="{{.Health}}"><td>{{.Name}}</td><td>{{.Role}}</td><td class="health-{{cls .Health}}" title="{{.Reason}}">{{.Health}}</td><td>{{.Version}}</td><td>{{.Started}}</td><td>{{.Gossip}}</td></tr>
{{end}}</table>{{end}}
</section>

<section id="nodes"><h2>Node monitors: {{len .Cells}}, {{.Slots}} slots, {{.Running}} running, {{.Free}} free, {{.Queued}} queued</h2>
<div class="grid">{{range .Cells}}<a class="{{.Class}}" data-name="{{.Name}}" style="background:{{.Color}}" title="{{.Title}}" href="node?name={{.Name}}"></a>{{end}}</div>
<p class="legend">slots running:<span style="background:#deebf7"></span>none<span style="background:#08306b"></span>all<span style="background:#ff7f0e"></span>full, work queued<span style="background:#bbbbbb"></span>no /status<span style="background:#d62728"></span>dead or unreachable</p>
</section>

<section id="users"><h2>Users</h2>
<table><tr><th>user</th><th class="num">running</th><th class="num">queued</th><th class="num">coordinator target</th></tr>
{{range .Users}}<tr class="user" data-user="{{.User}}" data-running="{{.Running}}"><td>{{.User}}</td><td class="num">{{.Running}}</td><td class="num">{{.Queued}}</td><td class="num">{{.Target}}</td></tr>
{{else}}<tr><td colspan="4">no work seen</td></tr>{{end}}</table>
</section>

<section id="history"><h2>Over the last minutes</h2><div class="charts">
<img alt="work per user" src="chart/users.svg?t={{.Stamp}}">
<img alt="tasks launched per second" src="chart/throughput.svg?t={{.Stamp}}">
<img alt="scheduling delay" src="chart/delay.svg?t={{.Stamp}}">
<img alt="held and refused submits" src="chart/held.svg?t={{.Stamp}}">
</div></section>

<section id="schedulers"><h2>Schedulers</h2>
<table><tr><th>name</th><th>health</th><th class="num">tasks/s</th><th class="num">jobs/s</th><th class="num">delay</th><th class="num">held</th><th class="num">refused/s</th><th>version</th></tr>
{{range .Schedulers}}<tr class="scheduler" data-name="{{.Name}}"><td>{{.Name}}</td><td class="health-{{cls .Health}}">{{.Health}}</td><td class="num">{{.Tasks}}</td><td class="num">{{.Jobs}}</td><td class="num">{{.Delay}}</td><td class="num">{{.Held}}</td><td class="num">{{.Refused}}</td><td>{{.Version}}</td></tr>
{{else}}<tr><td colspan="8">no scheduler answering /status</td></tr>{{end}}</table>
{{if .HeldTotal}}<p><strong>{{.HeldTotal}} submit calls held:</strong> the fleet is saturated.</p>{{end}}
</section>

{{with .Coordinator}}<section id="coordinator"><h2>Coordinator ({{if .Active}}active{{else}}standby{{end}}, guidance version {{.Version}}, {{.Reports}} reports)</h2>
<p>Each user's running tasks over the fleet beside its constrained max-min fair target (slots).</p>
<table><tr><th>user</th><th class="num">running</th><th class="num">target</th></tr>
{{range $u, $s := .Users}}<tr class="share" data-user="{{$u}}"><td>{{$u}}</td><td class="num">{{$s.Running}}</td><td class="num">{{printf "%.1f" $s.Target}}</td></tr>{{end}}
</table></section>{{end}}
{{if .Locality}}<section id="locality"><h2>Locality prices</h2>
<table>{{range .Locality}}<tr><td>{{index . 0}}</td><td class="num">{{index . 1}}</td></tr>{{end}}</table>
{{if .Racks}}<table><tr><th>rack</th><th class="num">price</th></tr>{{range .Racks}}<tr><td>{{index . 0}}</td><td class="num">{{index . 1}}</td></tr>{{end}}</table>{{end}}
</section>{{end}}
<p><small>Polled {{if .Polled}}at {{.Polled}}{{else}}not yet{{end}}; refreshed every {{.Refresh}} s; read-only.</small></p>
{{template "bottom" .}}`

const nodeHTML = `{{define "title"}}{{.M.Name}} · sparrowfleet{{end}}{{template "top" .}}
{{if .Found}}<section id="node" data-name="{{.M.Name}}" data-health="{{.M.Health}}"><h2>{{.M.Name}}</h2>
<table>
<tr><td>health</td><td class="health-{{cls .M.Health}}">{{.M.Health}}{{if .M.Reason}}: {{.M.Reason}}{{end}}</td></tr>
<tr><td>role</td><td>{{.M.Role}}</td></tr><tr><td>gossip</td><td>{{.M.Gossip}}</td></tr>
<tr><td>version</td><td>{{.M.Version}}</td></tr><tr><td>started</td><td>{{.M.Started}}</td></tr>
<tr><td>slots</td><td class="num">{{.Slots}}</td></tr><tr><td>apps</td><td>{{.Apps}}</td></tr>
{{with .NM}}<tr><td>free</td><td class="num">{{.Free}}</td></tr><tr><td>fetching</td><td class="num">{{.Fetching}}</td></tr>
<tr><td>running</td><td class="num">{{.Running}}</td></tr><tr><td>queued</td><td class="num">{{.Queued}}</td></tr>
<tr><td>launches</td><td class="num">{{.Launches}}</td></tr>{{end}}
</table>
{{if .Users}}<h2>Users here</h2><table><tr><th>user</th><th class="num">running</th><th class="num">queued</th></tr>
{{range .Users}}<tr><td>{{.User}}</td><td class="num">{{.Running}}</td><td class="num">{{.Queued}}</td></tr>{{end}}</table>{{end}}
</section>{{else}}<section><h2>No such member</h2><p>It is not in the gossip view, or was forgotten after it left.</p></section>{{end}}
{{template "bottom" .}}`

// funcs are the templates' helpers: cls makes a health a class name.
var funcs = template.FuncMap{"cls": func(h any) string { return strings.ReplaceAll(fmt.Sprint(h), " ", "-") }}

var (
	overviewPage = template.Must(template.Must(template.New("overview").Funcs(funcs).Parse(layout)).Parse(overviewHTML))
	nodePage     = template.Must(template.Must(template.New("node").Funcs(funcs).Parse(layout)).Parse(nodeHTML))
)
