package helmtest

import (
	"fmt"
	"net"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart"
	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"sigs.k8s.io/yaml"
)

const (
	chartDir  = "../helm/sparrowfleet"
	release   = "fleet"
	namespace = "batch"
)

// variants are the documented ways to install the chart, as values files.
var variants = []struct {
	name   string
	values string
	// check looks for what the variant is about, beyond the checks every
	// rendering gets.
	check func(t *testing.T, r *rendered)
	// requires names a flag the variant adds that a daemon built from
	// another branch may lack; without it the variant is still rendered
	// and checked, the flag's existence excepted.
	requires string
}{
	{"defaults", ``, func(t *testing.T, r *rendered) {
		nm := r.workload(t, "nodemonitor")
		if nm.kind != "DaemonSet" {
			t.Errorf("node monitors run as a %s, want a DaemonSet", nm.kind)
		}
		if !hasArg(nm.pod.Spec.Containers[0], "--k8s-node=$(NODE_NAME)") {
			t.Error("the node monitor DaemonSet does not watch its Node: kubectl drain would leave it taking work")
		}
		if len(r.serviceMonitors)+len(r.netpols) != 0 {
			t.Error("a ServiceMonitor or NetworkPolicy rendered though both are off by default")
		}
		if len(nm.pod.Spec.Containers) != 2 || nm.pod.Spec.Containers[1].Args[0] != "executor" {
			t.Errorf("node monitor pod runs %d containers, want the node monitor and the sleep executor", len(nm.pod.Spec.Containers))
		}
		if r.find("coordinator") != nil {
			t.Error("a coordinator is rendered though coordinator.enabled is false")
		}
		if s := r.workload(t, "scheduler"); s.replicas != 2 {
			t.Errorf("%d schedulers, want 2", s.replicas)
		}
	}, ""},
	{"node monitors as a Deployment", `
nodeMonitor:
  kind: Deployment
  replicas: 5
`, func(t *testing.T, r *rendered) {
		nm := r.workload(t, "nodemonitor")
		if nm.kind != "Deployment" || nm.replicas != 5 {
			t.Fatalf("node monitors: %s of %d, want a Deployment of 5", nm.kind, nm.replicas)
		}
		a := nm.pod.Spec.Affinity
		if a == nil || a.PodAntiAffinity == nil || len(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution) != 1 ||
			a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution[0].TopologyKey != "kubernetes.io/hostname" {
			t.Errorf("node monitor Deployment lacks one-per-node anti-affinity: %+v", a)
		}
	}, ""},
	{"coordinator with a standby", `
coordinator:
  enabled: true
`, func(t *testing.T, r *rendered) {
		c := r.workload(t, "coordinator")
		if c.replicas != 2 {
			t.Errorf("%d coordinators, want a leader and a standby", c.replicas)
		}
		if r.pdbFor(t, c).Spec.MinAvailable.IntValue() != 1 {
			t.Error("the coordinator's PodDisruptionBudget does not keep one available")
		}
	}, ""},
	{"gossip key and TLS from Secrets", `
gossip:
  keySecret: fleet-gossip
tls:
  enabled: true
  secretName: fleet-tls
nodeMonitor:
  executors:
    - app: spark
      image: example.org/spark-executor:3
      args: ["--tls-ca=/etc/sparrow/tls/ca.crt"]
      resources: {requests: {cpu: "1"}}
`, func(t *testing.T, r *rendered) {
		for _, w := range r.workloads {
			c := w.pod.Spec.Containers[0]
			if e := env(c, "SPARROW_GOSSIP_KEY"); e == nil || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil || e.ValueFrom.SecretKeyRef.Name != "fleet-gossip" {
				t.Errorf("%s: gossip key not taken from Secret fleet-gossip: %+v", w.name, e)
			}
			for _, f := range []string{"--tls-ca=/etc/sparrow/tls/ca.crt", "--tls-cert=/etc/sparrow/tls/tls.crt", "--tls-key=/etc/sparrow/tls/tls.key", "--tls-require-client-cert"} {
				if !hasArg(c, f) {
					t.Errorf("%s: no %s", w.name, f)
				}
			}
			if v := volume(w, "tls"); v == nil || v.Secret == nil || v.Secret.SecretName != "fleet-tls" {
				t.Errorf("%s: TLS material not mounted from Secret fleet-tls: %+v", w.name, w.pod.Spec.Volumes)
			}
			for _, c := range w.pod.Spec.Containers {
				if m := mountAt(c, "/etc/sparrow/tls"); m == nil || m.Name != "tls" {
					t.Errorf("%s/%s: TLS material not mounted at /etc/sparrow/tls: %+v", w.name, c.Name, c.VolumeMounts)
				}
			}
		}
	}, ""},
	{"own executors, longer drain, no scrape annotations", `
metrics:
  scrape: false
nodeMonitor:
  drainTimeoutSeconds: 120
  executors:
    - app: spark
      image: example.org/spark-executor:3
      args: ["--node-monitor=127.0.0.1:20501"]
      resources: {requests: {cpu: "1"}}
    - app: sleep
      port: 20102
      resources: {}
`, func(t *testing.T, r *rendered) {
		nm := r.workload(t, "nodemonitor")
		if g := *nm.pod.Spec.TerminationGracePeriodSeconds; g != 130 {
			t.Errorf("grace period %d s, want the 120 s drain plus 10", g)
		}
		cs := nm.pod.Spec.Containers
		if len(cs) != 3 || cs[1].Image != "example.org/spark-executor:3" || !hasArg(cs[2], "--listen=127.0.0.1:20102") {
			t.Errorf("executors not as configured: %+v", cs[1:])
		}
		if _, ok := nm.pod.Annotations["prometheus.io/scrape"]; ok {
			t.Error("scrape annotations rendered with metrics.scrape false")
		}
	}, ""},
}

// TestChartRenders renders every variant, decodes every object strictly
// into its Kubernetes type and checks it against the binary.
func TestChartRenders(t *testing.T) {
	ch := loadChart(t)
	for _, v := range variants {
		t.Run(v.name, func(t *testing.T) {
			r := render(t, ch, v.values)
			if v.requires != "" {
				if _, ok := help(t, "scheduler").flags[v.requires]; !ok {
					t.Logf("this build has no --%s: not checking that it exists", v.requires)
					r.laterFlags = map[string]bool{v.requires: true}
				}
			}
			r.checkAll(t)
			v.check(t, r)
		})
	}
}

// Values the chart cannot honour are refused with a message naming them.
func TestChartRefusesBadValues(t *testing.T) {
	ch := loadChart(t)
	for _, tc := range []struct{ values, want string }{
		{"nodeMonitor:\n  kind: StatefulSet\n", "/nodeMonitor/kind"},
		{"tls:\n  enabled: true\n", "tls.enabled needs tls.secretName or tls.volume"},
		{"tls:\n  enabled: true\n  secretName: t\n", "the built-in sparrow executor (app sleep) has no TLS"},
	} {
		_, err := renderErr(ch, tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %q: error %v, want one saying %q", tc.values, err, tc.want)
		}
	}
}

func loadChart(t *testing.T) *chart.Chart {
	t.Helper()
	ch, err := loader.Load(chartDir)
	if err != nil {
		t.Fatalf("load chart: %v", err)
	}
	return ch
}

func renderErr(ch *chart.Chart, values string) (map[string]string, error) {
	return renderIn(ch, values, nil)
}

// renderIn renders as against a cluster whose objects cluster provides
// to lookup; nil: no cluster (helm template).
func renderIn(ch *chart.Chart, values string, cluster engine.ClientProvider) (map[string]string, error) {
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		return nil, err
	}
	// ToRenderValues validates the values against values.schema.json, as
	// helm install and helm template do.
	rv, err := chartutil.ToRenderValues(ch, vals, chartutil.ReleaseOptions{Name: release, Namespace: namespace, IsInstall: true, Revision: 1}, chartutil.DefaultCapabilities)
	if err != nil {
		return nil, err
	}
	if cluster != nil {
		return engine.RenderWithClientProvider(ch, rv, cluster)
	}
	return engine.Render(ch, rv)
}

// workload is a Deployment or DaemonSet, reduced to what the checks need.
type workload struct {
	kind, name string
	replicas   int32
	selector   map[string]string
	pod        corev1.PodTemplateSpec
}

type rendered struct {
	workloads       []*workload
	services        []corev1.Service
	pdbs            []policyv1.PodDisruptionBudget
	serviceAccounts []corev1.ServiceAccount
	clusterRoles    []rbacv1.ClusterRole
	bindings        []rbacv1.ClusterRoleBinding
	netpols         []networkingv1.NetworkPolicy
	serviceMonitors []serviceMonitor
	// laterFlags are flags the chart may pass that the binary built here
	// does not have yet (a variant's requires).
	laterFlags map[string]bool
}

// serviceMonitor is the part of a Prometheus Operator ServiceMonitor
// (monitoring.coreos.com/v1) the chart sets; decoding is strict, so a
// field the chart renders must be named here, as the operator's CRD
// spells it.
type serviceMonitor struct {
	APIVersion string            `json:"apiVersion"`
	Kind       string            `json:"kind"`
	Metadata   metav1.ObjectMeta `json:"metadata"`
	Spec       struct {
		Selector          metav1.LabelSelector `json:"selector"`
		NamespaceSelector struct {
			MatchNames []string `json:"matchNames"`
		} `json:"namespaceSelector"`
		PodTargetLabels []string `json:"podTargetLabels"`
		Endpoints       []struct {
			Port     string `json:"port"`
			Path     string `json:"path"`
			Interval string `json:"interval"`
		} `json:"endpoints"`
	} `json:"spec"`
}

var docSep = regexp.MustCompile(`(?m)^---\s*$`)

// render renders the chart with values and decodes every object.
func render(t *testing.T, ch *chart.Chart, values string) *rendered {
	t.Helper()
	files, err := renderErr(ch, values)
	if err != nil {
		t.Fatalf("render: %v", err)
	}
	return decodeAll(t, files)
}

// decodeAll decodes every object of a rendering.
func decodeAll(t *testing.T, files map[string]string) *rendered {
	t.Helper()
	names := make([]string, 0, len(files))
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	r := &rendered{}
	for _, name := range names {
		if filepath.Ext(name) != ".yaml" {
			continue // NOTES.txt, _helpers.tpl
		}
		for i, doc := range docSep.Split(files[name], -1) {
			if strings.TrimSpace(stripComments(doc)) == "" {
				continue
			}
			if err := r.decode([]byte(doc)); err != nil {
				t.Fatalf("%s, document %d: %v\n%s", name, i, err, doc)
			}
		}
	}
	if len(r.workloads) == 0 {
		t.Fatal("the chart rendered no workload")
	}
	return r
}

func stripComments(doc string) string {
	var b strings.Builder
	for _, l := range strings.Split(doc, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(l), "#") {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// decode decodes one object into its k8s.io/api type, refusing unknown
// fields, and keeps it.
func (r *rendered) decode(doc []byte) error {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return err
	}
	strict := func(v any) error { return yaml.UnmarshalStrict(doc, v) }
	switch head.APIVersion + " " + head.Kind {
	case "apps/v1 Deployment":
		var d appsv1.Deployment
		if err := strict(&d); err != nil {
			return err
		}
		r.workloads = append(r.workloads, &workload{kind: "Deployment", name: d.Name, replicas: *d.Spec.Replicas, selector: d.Spec.Selector.MatchLabels, pod: d.Spec.Template})
	case "apps/v1 DaemonSet":
		var d appsv1.DaemonSet
		if err := strict(&d); err != nil {
			return err
		}
		r.workloads = append(r.workloads, &workload{kind: "DaemonSet", name: d.Name, selector: d.Spec.Selector.MatchLabels, pod: d.Spec.Template})
	case "v1 Service":
		var s corev1.Service
		if err := strict(&s); err != nil {
			return err
		}
		r.services = append(r.services, s)
	case "policy/v1 PodDisruptionBudget":
		var p policyv1.PodDisruptionBudget
		if err := strict(&p); err != nil {
			return err
		}
		r.pdbs = append(r.pdbs, p)
	case "v1 ServiceAccount":
		var a corev1.ServiceAccount
		if err := strict(&a); err != nil {
			return err
		}
		r.serviceAccounts = append(r.serviceAccounts, a)
	case "rbac.authorization.k8s.io/v1 ClusterRole":
		var c rbacv1.ClusterRole
		if err := strict(&c); err != nil {
			return err
		}
		r.clusterRoles = append(r.clusterRoles, c)
	case "rbac.authorization.k8s.io/v1 ClusterRoleBinding":
		var b rbacv1.ClusterRoleBinding
		if err := strict(&b); err != nil {
			return err
		}
		r.bindings = append(r.bindings, b)
	case "networking.k8s.io/v1 NetworkPolicy":
		var n networkingv1.NetworkPolicy
		if err := strict(&n); err != nil {
			return err
		}
		r.netpols = append(r.netpols, n)
	case "monitoring.coreos.com/v1 ServiceMonitor":
		var m serviceMonitor
		if err := strict(&m); err != nil {
			return err
		}
		r.serviceMonitors = append(r.serviceMonitors, m)
	default:
		return fmt.Errorf("the chart renders a %s %s, which this test does not know: add it to decode", head.APIVersion, head.Kind)
	}
	return nil
}

func (r *rendered) find(component string) *workload {
	for _, w := range r.workloads {
		if w.pod.Labels["app.kubernetes.io/component"] == component {
			return w
		}
	}
	return nil
}

func (r *rendered) workload(t *testing.T, component string) *workload {
	t.Helper()
	w := r.find(component)
	if w == nil {
		t.Fatalf("no %s rendered", component)
	}
	return w
}

func (r *rendered) pdbFor(t *testing.T, w *workload) policyv1.PodDisruptionBudget {
	t.Helper()
	for _, p := range r.pdbs {
		if labels.SelectorFromSet(p.Spec.Selector.MatchLabels).Matches(labels.Set(w.pod.Labels)) {
			return p
		}
	}
	t.Fatalf("no PodDisruptionBudget covers %s", w.name)
	return policyv1.PodDisruptionBudget{}
}

func env(c corev1.Container, name string) *corev1.EnvVar {
	for i := range c.Env {
		if c.Env[i].Name == name {
			return &c.Env[i]
		}
	}
	return nil
}

func hasArg(c corev1.Container, arg string) bool {
	for _, a := range c.Args {
		if a == arg {
			return true
		}
	}
	return false
}

// flagValue returns the value of --name=value in c's args.
func flagValue(c corev1.Container, name string) (string, bool) {
	for _, a := range c.Args {
		if v, ok := strings.CutPrefix(a, "--"+name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// checkAll runs the checks every rendering must pass.
func (r *rendered) checkAll(t *testing.T) {
	gossip := r.checkGossipService(t)
	for _, w := range r.workloads {
		if !labels.SelectorFromSet(w.selector).Matches(labels.Set(w.pod.Labels)) {
			t.Errorf("%s: selector %v does not match its pods' labels %v", w.name, w.selector, w.pod.Labels)
		}
		r.pdbFor(t, w)
		for _, c := range w.pod.Spec.Containers {
			if c.Image == "" || len(c.Args) == 0 && len(c.Command) == 0 {
				t.Errorf("%s/%s: no image, or neither command nor args", w.name, c.Name)
				continue
			}
			if !strings.HasPrefix(c.Image, "sparrowfleet:") {
				continue // an application's own executor image
			}
			checkContainer(t, w, c, gossip, r.laterFlags)
		}
	}
	for _, s := range r.services {
		r.checkService(t, s)
	}
	r.checkPods(t)
	r.checkNodeWatch(t)
}

// checkGossipService checks the headless Service members join through and
// returns its "name.namespace.svc:port".
func (r *rendered) checkGossipService(t *testing.T) string {
	for _, s := range r.services {
		if s.Spec.ClusterIP != corev1.ClusterIPNone || len(s.Spec.Ports) == 0 || s.Spec.Ports[0].Name != "gossip-tcp" {
			continue
		}
		if !s.Spec.PublishNotReadyAddresses {
			t.Errorf("gossip Service %s lists only ready pods: members are ready only once they have joined", s.Name)
		}
		for _, w := range r.workloads {
			if !labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.pod.Labels)) {
				t.Errorf("gossip Service %s does not select %s", s.Name, w.name)
			}
		}
		return fmt.Sprintf("%s.%s.svc:%d", s.Name, namespace, s.Spec.Ports[0].Port)
	}
	t.Fatal("no headless gossip Service")
	return ""
}

// listenFlags are the flags that bind a port a container serves.
var listenFlags = []string{"listen", "internal-listen", "gettask-listen", "http-listen", "gossip"}

// checkContainer checks one container running the sparrow image against
// `sparrow <cmd> --help`.
func checkContainer(t *testing.T, w *workload, c corev1.Container, gossip string, laterFlags map[string]bool) {
	where := w.name + "/" + c.Name
	cmd := c.Args[0]
	h := help(t, cmd)
	envs := map[string]bool{}
	for _, e := range c.Env {
		envs[e.Name] = true
	}
	// Every flag exists, and every $(VAR) it uses is defined.
	for _, a := range c.Args[1:] {
		name, ok := strings.CutPrefix(a, "--")
		if !ok {
			t.Errorf("%s: argument %q is not a --flag", where, a)
			continue
		}
		name, _, _ = strings.Cut(name, "=")
		if _, ok := h.flags[name]; !ok && !laterFlags[name] {
			t.Errorf("%s: sparrow %s has no flag --%s", where, cmd, name)
		}
		for _, m := range regexp.MustCompile(`\$\(([A-Z_]+)\)`).FindAllStringSubmatch(a, -1) {
			if !envs[m[1]] {
				t.Errorf("%s: %s uses $(%s), which the container does not define", where, a, m[1])
			}
		}
	}
	// Every SPARROW_ variable sets a flag or is one the binary documents.
	for _, e := range c.Env {
		rest, ok := strings.CutPrefix(e.Name, "SPARROW_")
		if !ok {
			continue
		}
		if _, isFlag := h.flags[strings.ReplaceAll(strings.ToLower(rest), "_", "-")]; !isFlag && !strings.Contains(h.text, "$"+e.Name) {
			t.Errorf("%s: sparrow %s neither has a flag for $%s nor mentions it", where, cmd, e.Name)
		}
	}
	if cmd == "executor" {
		if l, _ := flagValue(c, "listen"); !strings.HasPrefix(l, "127.0.0.1:") {
			t.Errorf("%s: an executor listens on %q, want the pod's loopback", where, l)
		}
		return
	}
	// A daemon: joins the gossip Service, and declares exactly the ports
	// its listen flags bind.
	if j, _ := flagValue(c, "join"); j != gossip {
		t.Errorf("%s: --join=%s, want the gossip Service %s", where, j, gossip)
	}
	bound := map[int32]string{}
	for _, f := range listenFlags {
		v, ok := flagValue(c, f)
		if !ok {
			continue
		}
		_, p, err := net.SplitHostPort(v)
		n, err2 := strconv.Atoi(p)
		if err != nil || err2 != nil {
			t.Errorf("%s: --%s=%s is not host:port", where, f, v)
			continue
		}
		bound[int32(n)] = f
	}
	named := map[string]int32{}
	for _, p := range c.Ports {
		named[p.Name] = p.ContainerPort
		if _, ok := bound[p.ContainerPort]; !ok {
			t.Errorf("%s: port %s (%d) is bound by no flag", where, p.Name, p.ContainerPort)
		}
	}
	for port, f := range bound {
		found := false
		for _, p := range c.Ports {
			found = found || p.ContainerPort == port
		}
		if !found {
			t.Errorf("%s: --%s binds %d, which the container does not declare", where, f, port)
		}
	}
	httpPort := mustPort(t, where, c, "http-listen")
	pathsServed := h.flags["http-listen"]
	// Probes and scrape annotations name paths the binary serves, on the
	// port it serves them on.
	for what, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
		if p == nil || p.HTTPGet == nil {
			t.Errorf("%s: no HTTP %s probe", where, what)
			continue
		}
		if !strings.Contains(pathsServed, p.HTTPGet.Path) {
			t.Errorf("%s: %s probe path %s is not among what --http-listen serves (%s)", where, what, p.HTTPGet.Path, pathsServed)
		}
		if named[p.HTTPGet.Port.String()] != httpPort && p.HTTPGet.Port.IntValue() != int(httpPort) {
			t.Errorf("%s: %s probe port %s is not --http-listen's %d", where, what, p.HTTPGet.Port.String(), httpPort)
		}
	}
	if c.LivenessProbe != nil && c.LivenessProbe.HTTPGet != nil && c.LivenessProbe.HTTPGet.Path != "/livez" ||
		c.ReadinessProbe != nil && c.ReadinessProbe.HTTPGet != nil && c.ReadinessProbe.HTTPGet.Path != "/readyz" {
		t.Errorf("%s: probes are not /livez and /readyz", where)
	}
	if a := w.pod.Annotations; a["prometheus.io/scrape"] == "true" {
		if a["prometheus.io/port"] != strconv.Itoa(int(httpPort)) || !strings.Contains(pathsServed, a["prometheus.io/path"]) {
			t.Errorf("%s: scrape annotations %v do not name --http-listen's port and /metrics", where, a)
		}
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("%s: no CPU and memory requests", where)
	}
	if cmd == "nodemonitor" || cmd == "scheduler" {
		checkDrain(t, w, c)
	}
}

func mustPort(t *testing.T, where string, c corev1.Container, flag string) int32 {
	v, ok := flagValue(c, flag)
	if !ok {
		t.Errorf("%s: no --%s", where, flag)
		return 0
	}
	_, p, _ := net.SplitHostPort(v)
	n, _ := strconv.Atoi(p)
	return int32(n)
}

// checkDrain checks that Kubernetes waits for a daemon's whole drain,
// and that a node monitor's executors keep running tasks for as long.
func checkDrain(t *testing.T, w *workload, c corev1.Container) {
	v, ok := flagValue(c, "drain-timeout")
	if !ok {
		t.Errorf("%s: %s has no --drain-timeout", w.name, c.Name)
		return
	}
	drain, err := strconv.Atoi(strings.TrimSuffix(v, "s"))
	if err != nil {
		t.Errorf("%s: --drain-timeout=%s is not whole seconds", w.name, v)
		return
	}
	if g := w.pod.Spec.TerminationGracePeriodSeconds; g == nil || *g <= int64(drain) {
		t.Errorf("%s: terminationGracePeriodSeconds %v does not outlast --drain-timeout=%s", w.name, g, v)
	}
	for _, e := range w.pod.Spec.Containers[1:] {
		if len(e.Args) > 0 && e.Args[0] == "executor" {
			if d, _ := flagValue(e, "drain"); d != v {
				t.Errorf("%s/%s: executor --drain=%s, want the node monitor's %s", w.name, e.Name, d, v)
			}
		}
	}
}

// checkService checks that a Service selects pods and targets ports they
// declare, by name and protocol.
func (r *rendered) checkService(t *testing.T, s corev1.Service) {
	var selected []*workload
	for _, w := range r.workloads {
		if labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.pod.Labels)) {
			selected = append(selected, w)
		}
	}
	if len(selected) == 0 {
		t.Errorf("Service %s selects no pods", s.Name)
	}
	for _, sp := range s.Spec.Ports {
		for _, w := range selected {
			found := false
			for _, p := range w.pod.Spec.Containers[0].Ports {
				found = found || p.Name == sp.TargetPort.String() && p.Protocol == sp.Protocol
			}
			if !found {
				t.Errorf("Service %s targets port %s/%s, which %s does not declare", s.Name, sp.TargetPort.String(), sp.Protocol, w.name)
			}
		}
	}
}
