package helmtest

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	dynamicfake "k8s.io/client-go/dynamic/fake"
)

// saDir is where a pod's service account token and CA are mounted.
const saDir = "/var/run/secrets/kubernetes.io/serviceaccount"

func init() {
	variants = append(variants, operatorVariants...)
}

// operatorVariants are the ways operators run the chart beyond a trial:
// their own executors, monitoring, network policy, admin token.
var operatorVariants = []struct {
	name     string
	values   string
	check    func(t *testing.T, r *rendered)
	requires string
}{
	{"executors with environment, volumes, command, probes and a service account", `
nodeMonitor:
  executors:
    - app: spark
      image: example.org/spark-executor:3
      command: ["/opt/spark/bin/executor"]
      env: [{name: SPARK_HOME, value: /opt/spark}]
      envFrom: [{secretRef: {name: spark-creds}}]
      volumes: [{name: cache, emptyDir: {}}]
      volumeMounts: [{name: cache, mountPath: /cache}]
      serviceAccountName: spark
      readinessProbe: {tcpSocket: {port: 20102}}
      livenessProbe: {tcpSocket: {port: 20102}, periodSeconds: 20}
      startupProbe: {tcpSocket: {port: 20102}, failureThreshold: 30}
      lifecycle: {preStop: {sleep: {seconds: 20}}}
      resources: {requests: {cpu: "1"}}
    - app: sleep
      port: 20101
      resources: {requests: {cpu: 100m, memory: 64Mi}}
`, func(t *testing.T, r *rendered) {
		nm := r.workload(t, "nodemonitor")
		spark := container(t, nm, "executor-spark")
		if !slices.Equal(spark.Command, []string{"/opt/spark/bin/executor"}) || len(spark.Args) != 0 {
			t.Errorf("command %v args %v, want the command alone", spark.Command, spark.Args)
		}
		if e := env(spark, "SPARK_HOME"); e == nil || e.Value != "/opt/spark" {
			t.Errorf("SPARK_HOME not set: %+v", spark.Env)
		}
		if len(spark.EnvFrom) != 1 || spark.EnvFrom[0].SecretRef == nil || spark.EnvFrom[0].SecretRef.Name != "spark-creds" {
			t.Errorf("envFrom %+v, want Secret spark-creds", spark.EnvFrom)
		}
		if m := mountAt(spark, "/cache"); m == nil || volume(nm, m.Name) == nil || volume(nm, m.Name).EmptyDir == nil {
			t.Errorf("/cache not mounted from the executor's volume: %+v", spark.VolumeMounts)
		}
		if spark.ReadinessProbe == nil || spark.LivenessProbe == nil || spark.StartupProbe == nil || spark.StartupProbe.FailureThreshold != 30 {
			t.Errorf("probes not as configured: %+v %+v %+v", spark.ReadinessProbe, spark.LivenessProbe, spark.StartupProbe)
		}
		if spark.Lifecycle == nil || spark.Lifecycle.PreStop == nil || spark.Lifecycle.PreStop.Sleep == nil || spark.Lifecycle.PreStop.Sleep.Seconds != 20 {
			t.Errorf("lifecycle %+v, want a 20 s preStop sleep", spark.Lifecycle)
		}
		if nm.pod.Spec.ServiceAccountName != "spark" {
			t.Errorf("pod service account %q, want the executors' spark", nm.pod.Spec.ServiceAccountName)
		}
		if mountAt(spark, saDir) == nil {
			t.Error("the executor naming the service account does not get its token")
		}
		if sleep := container(t, nm, "executor-sleep"); mountAt(sleep, saDir) != nil {
			t.Error("an executor naming no service account gets the pod's token")
		}
		for _, a := range r.serviceAccounts {
			t.Errorf("the chart creates service account %s though the executors name spark", a.Name)
		}
	}, ""},
	{"node monitors as a Deployment watch their Node too", `
nodeMonitor:
  kind: Deployment
`, func(t *testing.T, r *rendered) {
		if nm := r.workload(t, "nodemonitor"); !hasArg(nm.pod.Spec.Containers[0], "--k8s-node=$(NODE_NAME)") {
			t.Error("a node monitor Deployment does not watch its Node")
		}
	}, ""},
	{"no Node watch", `
nodeMonitor:
  watchCordon: false
`, func(t *testing.T, r *rendered) {
		nm := r.workload(t, "nodemonitor")
		if _, ok := flagValue(nm.pod.Spec.Containers[0], "k8s-node"); ok {
			t.Error("--k8s-node passed with watchCordon false")
		}
		if len(r.clusterRoles)+len(r.bindings)+len(r.serviceAccounts) != 0 || nm.pod.Spec.ServiceAccountName != "" {
			t.Error("RBAC or a service account rendered with nothing to use it")
		}
		for _, c := range nm.pod.Spec.Containers {
			if mountAt(c, saDir) != nil {
				t.Errorf("%s gets a service account token it does not use", c.Name)
			}
		}
	}, ""},
	{"ServiceMonitor, NetworkPolicy, gossip key", `
gossip:
  keySecret: fleet-gossip
metrics:
  serviceMonitor:
    enabled: true
    labels: {release: prom}
networkPolicy:
  enabled: true
  httpFrom:
    - namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: monitoring}}
coordinator:
  enabled: true
`, func(t *testing.T, r *rendered) {
		if len(r.serviceMonitors) != 1 {
			t.Fatalf("%d ServiceMonitors, want 1", len(r.serviceMonitors))
		}
		sm := r.serviceMonitors[0]
		if sm.Metadata.Labels["release"] != "prom" || len(sm.Spec.Endpoints) != 1 || sm.Spec.Endpoints[0].Path != "/metrics" ||
			!slices.Equal(sm.Spec.NamespaceSelector.MatchNames, []string{namespace}) {
			t.Errorf("ServiceMonitor %+v", sm)
		}
		// The ServiceMonitor's Services together reach every daemon's
		// metrics port by name.
		sel, err := metav1.LabelSelectorAsSelector(&sm.Spec.Selector)
		if err != nil {
			t.Fatal(err)
		}
		reached := map[string]bool{}
		for _, s := range r.services {
			if !sel.Matches(labels.Set(s.Labels)) {
				continue
			}
			for _, p := range s.Spec.Ports {
				if p.Name != sm.Spec.Endpoints[0].Port {
					continue
				}
				for _, w := range r.workloads {
					if labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(w.pod.Labels)) && port(w.pod.Spec.Containers[0], p.TargetPort.String()) != 0 {
						reached[w.name] = true
					}
				}
			}
		}
		for _, w := range r.workloads {
			if !reached[w.name] {
				t.Errorf("the ServiceMonitor does not reach %s's metrics", w.name)
			}
		}
		checkNetworkPolicy(t, r)
		for _, w := range r.workloads {
			if _, ok := w.pod.Annotations["checksum/gossip-key"]; !ok {
				t.Errorf("%s: no checksum of the gossip key", w.name)
			}
		}
	}, ""},
	{"admin token for POST /drain", `
http:
  adminTokenSecret: fleet-admin
  adminTokenSecretKey: bearer
coordinator:
  enabled: true
`, func(t *testing.T, r *rendered) {
		for _, w := range r.workloads {
			c := w.pod.Spec.Containers[0]
			f, ok := flagValue(c, "http-admin-token-file")
			if !ok {
				t.Errorf("%s: no --http-admin-token-file", w.name)
				continue
			}
			m := mountUnder(c, f)
			if m == nil {
				t.Errorf("%s: %s is on no mount", w.name, f)
				continue
			}
			v := volume(w, m.Name)
			if v == nil || v.Secret == nil || v.Secret.SecretName != "fleet-admin" || len(v.Secret.Items) != 1 ||
				v.Secret.Items[0].Key != "bearer" || m.MountPath+"/"+v.Secret.Items[0].Path != f {
				t.Errorf("%s: %s is not key bearer of Secret fleet-admin: %+v", w.name, f, v)
			}
		}
	}, "http-admin-token-file"},
}

// checkPods checks what every pod needs: volumes named once and every
// mount naming one, a writable /tmp in every container with a read-only
// root, schedulers spread over nodes, and no service account token but
// where one is used.
func (r *rendered) checkPods(t *testing.T) {
	for _, w := range r.workloads {
		names := map[string]bool{}
		for _, v := range w.pod.Spec.Volumes {
			if names[v.Name] {
				t.Errorf("%s: volume %s defined twice", w.name, v.Name)
			}
			names[v.Name] = true
		}
		if a := w.pod.Spec.AutomountServiceAccountToken; a == nil || *a {
			t.Errorf("%s: the service account token is mounted into every container", w.name)
		}
		for _, c := range w.pod.Spec.Containers {
			for _, m := range c.VolumeMounts {
				if !names[m.Name] {
					t.Errorf("%s/%s: mounts volume %s, which the pod does not define", w.name, c.Name, m.Name)
				}
			}
			if strings.HasPrefix(c.Name, "executor-") || c.Name == "nodemonitor" {
				m := mountAt(c, "/tmp")
				if m == nil || m.ReadOnly || volume(w, m.Name).EmptyDir == nil {
					t.Errorf("%s/%s: no writable /tmp of its own", w.name, c.Name)
				}
				for _, o := range w.pod.Spec.Containers {
					if o.Name != c.Name && m != nil && mountAt(o, "/tmp") != nil && mountAt(o, "/tmp").Name == m.Name {
						t.Errorf("%s: %s and %s share /tmp", w.name, c.Name, o.Name)
					}
				}
			}
		}
		if w.pod.Labels["app.kubernetes.io/component"] == "scheduler" {
			checkSpread(t, w)
		}
	}
}

func checkSpread(t *testing.T, w *workload) {
	for _, c := range w.pod.Spec.TopologySpreadConstraints {
		if c.TopologyKey == "kubernetes.io/hostname" && c.WhenUnsatisfiable == corev1.ScheduleAnyway && c.LabelSelector != nil &&
			labels.SelectorFromSet(c.LabelSelector.MatchLabels).Matches(labels.Set(w.pod.Labels)) {
			return
		}
	}
	t.Errorf("%s: not spread across nodes (ScheduleAnyway): %+v", w.name, w.pod.Spec.TopologySpreadConstraints)
}

// checkNodeWatch checks that a node monitor given --k8s-node can do
// it: NODE_NAME is its Node, its container has the token and CA, and its
// pod's service account is bound to get and watch nodes.
func (r *rendered) checkNodeWatch(t *testing.T) {
	w := r.find("nodemonitor")
	if w == nil {
		return
	}
	c := w.pod.Spec.Containers[0]
	if v, ok := flagValue(c, "k8s-node"); !ok {
		return
	} else if v != "$(NODE_NAME)" {
		t.Errorf("--k8s-node=%s, want $(NODE_NAME)", v)
	}
	if e := env(c, "NODE_NAME"); e == nil || e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "spec.nodeName" {
		t.Errorf("NODE_NAME is not the pod's spec.nodeName: %+v", e)
	}
	m := mountAt(c, saDir)
	if m == nil {
		t.Fatalf("%s: --k8s-node without the service account token at %s", w.name, saDir)
	}
	v := volume(w, m.Name)
	var token, ca bool
	for _, src := range v.Projected.Sources {
		token = token || src.ServiceAccountToken != nil && src.ServiceAccountToken.Path == "token"
		ca = ca || src.ConfigMap != nil && src.ConfigMap.Name == "kube-root-ca.crt" && len(src.ConfigMap.Items) == 1 && src.ConfigMap.Items[0].Path == "ca.crt"
	}
	if !token || !ca {
		t.Errorf("%s: volume %s lacks the token or ca.crt: %+v", w.name, m.Name, v)
	}
	sa := w.pod.Spec.ServiceAccountName
	if sa == "" {
		t.Fatalf("%s: --k8s-node on the default service account", w.name)
	}
	for _, b := range r.bindings {
		bound := false
		for _, s := range b.Subjects {
			bound = bound || s.Kind == "ServiceAccount" && s.Name == sa && s.Namespace == namespace
		}
		if !bound || b.RoleRef.Kind != "ClusterRole" {
			continue
		}
		for _, role := range r.clusterRoles {
			if role.Name != b.RoleRef.Name {
				continue
			}
			for _, rule := range role.Rules {
				if slices.Contains(rule.APIGroups, "") && slices.Contains(rule.Resources, "nodes") &&
					slices.Contains(rule.Verbs, "get") && slices.Contains(rule.Verbs, "watch") {
					return
				}
			}
		}
	}
	t.Errorf("%s: service account %s is not bound to get and watch nodes", w.name, sa)
}

// checkNetworkPolicy checks that the policy selects every pod, keeps
// the Thrift and gossip ports every daemon declares open to all, and
// opens the HTTP port only to the release's pods and the listed peers.
func checkNetworkPolicy(t *testing.T, r *rendered) {
	if len(r.netpols) != 1 {
		t.Fatalf("%d NetworkPolicies, want 1", len(r.netpols))
	}
	np := r.netpols[0]
	open := map[string]bool{}   // "port/protocol" open to all
	limited := map[string]int{} // "port/protocol" -> peers allowed
	for _, rule := range np.Spec.Ingress {
		for _, p := range rule.Ports {
			k := p.Port.String() + "/" + string(*p.Protocol)
			if len(rule.From) == 0 {
				open[k] = true
			} else {
				limited[k] += len(rule.From)
			}
		}
	}
	for _, w := range r.workloads {
		sel, _ := metav1.LabelSelectorAsSelector(&np.Spec.PodSelector)
		if !sel.Matches(labels.Set(w.pod.Labels)) {
			t.Errorf("NetworkPolicy does not select %s", w.name)
		}
		for _, p := range w.pod.Spec.Containers[0].Ports {
			key := strconv.Itoa(int(p.ContainerPort)) + "/" + string(p.Protocol)
			switch p.Name {
			case "http":
				if open[key] || limited[key] != 2 {
					t.Errorf("%s: HTTP port %s open to all or not to the release and the one listed peer (%d peers)", w.name, key, limited[key])
				}
			case "thrift":
				if w.pod.Labels["app.kubernetes.io/component"] == "nodemonitor" {
					continue // executors call it on loopback
				}
				fallthrough
			default:
				if !open[key] {
					t.Errorf("%s: port %s (%s) is closed by the NetworkPolicy", w.name, p.Name, key)
				}
			}
		}
	}
}

// A rotated gossip key changes the pods' checksum annotation, so helm
// upgrade rolls them; an unchanged key leaves them be.
func TestGossipKeyRotationRollsPods(t *testing.T) {
	ch := loadChart(t)
	values := "gossip:\n  keySecret: fleet-gossip\n"
	sum := func(key string) map[string]string {
		secret := &corev1.Secret{
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "Secret"},
			ObjectMeta: metav1.ObjectMeta{Name: "fleet-gossip", Namespace: namespace},
			Data:       map[string][]byte{"keys": []byte(key)},
		}
		scheme := runtime.NewScheme()
		if err := corev1.AddToScheme(scheme); err != nil {
			t.Fatal(err)
		}
		files, err := renderIn(ch, values, secretsCluster{dynamicfake.NewSimpleDynamicClient(scheme, secret)})
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, w := range decodeAll(t, files).workloads {
			out[w.name] = w.pod.Annotations["checksum/gossip-key"]
		}
		return out
	}
	a, again, b := sum("key-one"), sum("key-one"), sum("key-two")
	for name, s := range a {
		if s == "" || s != again[name] || s == b[name] {
			t.Errorf("%s: checksum %q, %q for the same key, %q for another: want equal, then different", name, s, again[name], b[name])
		}
	}
}

// secretsCluster gives lookup a fake cluster's Secrets.
type secretsCluster struct{ client dynamic.Interface }

func (c secretsCluster) GetClientFor(apiVersion, kind string) (dynamic.NamespaceableResourceInterface, bool, error) {
	return c.client.Resource(schema.GroupVersionResource{Version: "v1", Resource: "secrets"}), true, nil
}

// The schema refuses values the chart cannot honour before anything is
// rendered, naming the value.
func TestSchemaRefusesBadValues(t *testing.T) {
	ch := loadChart(t)
	for _, tc := range []struct{ values, want string }{
		{"nodeMonitor:\n  slots: 0\n", "/nodeMonitor/slots"},
		{"nodeMonitor:\n  slot: 4\n", "slot"},
		{"scheduler:\n  topologySpread:\n    whenUnsatisfiable: Sometimes\n", "/scheduler/topologySpread/whenUnsatisfiable"},
		{"http:\n  port: 70000\n", "/http/port"},
		{"logLevel: loud\n", "/logLevel"},
		{"nodeMonitor:\n  executors:\n    - app: Spark_1\n      image: x\n", "/nodeMonitor/executors/0/app"},
		{"metrics:\n  serviceMonitor:\n    interval: often\n", "/metrics/serviceMonitor/interval"},
	} {
		_, err := renderErr(ch, tc.values)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("values %q: error %v, want one naming %q", tc.values, err, tc.want)
		}
	}
	// And the chart's own refusals still speak where the schema cannot.
	_, err := renderErr(ch, "nodeMonitor:\n  executors:\n    - {app: a, image: x, serviceAccountName: one}\n    - {app: b, image: other, serviceAccountName: two}\n")
	if err == nil || !strings.Contains(err.Error(), "one service account") {
		t.Errorf("two service accounts for one pod: error %v", err)
	}
}

func container(t *testing.T, w *workload, name string) corev1.Container {
	t.Helper()
	for _, c := range w.pod.Spec.Containers {
		if c.Name == name {
			return c
		}
	}
	t.Fatalf("%s has no container %s", w.name, name)
	return corev1.Container{}
}

func volume(w *workload, name string) *corev1.Volume {
	for i := range w.pod.Spec.Volumes {
		if w.pod.Spec.Volumes[i].Name == name {
			return &w.pod.Spec.Volumes[i]
		}
	}
	return nil
}

func mountAt(c corev1.Container, path string) *corev1.VolumeMount {
	for i := range c.VolumeMounts {
		if c.VolumeMounts[i].MountPath == path {
			return &c.VolumeMounts[i]
		}
	}
	return nil
}

// mountUnder returns the mount a file path lies on.
func mountUnder(c corev1.Container, file string) *corev1.VolumeMount {
	for i := range c.VolumeMounts {
		if strings.HasPrefix(file, c.VolumeMounts[i].MountPath+"/") {
			return &c.VolumeMounts[i]
		}
	}
	return nil
}

// port returns the number of c's port named name, 0 if none.
func port(c corev1.Container, name string) int32 {
	for _, p := range c.Ports {
		if p.Name == name {
			return p.ContainerPort
		}
	}
	return 0
}
