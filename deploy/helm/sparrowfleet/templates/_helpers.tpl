{{/* Names and labels. */}}
{{- define "sparrowfleet.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 50 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 50 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{- define "sparrowfleet.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{/* selector: the labels that pick one component's pods ("component" in dict). */}}
{{- define "sparrowfleet.selector" -}}
app.kubernetes.io/name: {{ .root.Chart.Name }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
app.kubernetes.io/component: {{ .component }}
{{- end -}}

{{- define "sparrowfleet.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end -}}

{{- define "sparrowfleet.gossipService" -}}
{{ include "sparrowfleet.fullname" . }}-gossip
{{- end -}}

{{/* Pod metadata shared by every component ("component" in dict). */}}
{{- define "sparrowfleet.podMeta" -}}
labels:
  {{- include "sparrowfleet.selector" . | nindent 2 }}
  sparrowfleet.io/gossip: "true"
  {{- with .root.Values.podLabels }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
annotations:
  {{- with .root.Values.gossip.keySecret }}
  {{- /* A rotated key rolls the pods on the next helm upgrade (lookup reads
  the Secret then; helm template, without a cluster, hashes nothing). */}}
  checksum/gossip-key: {{ (lookup "v1" "Secret" $.root.Release.Namespace .).data | toJson | sha256sum }}
  {{- end }}
  {{- if .root.Values.metrics.scrape }}
  prometheus.io/scrape: "true"
  prometheus.io/port: {{ .root.Values.http.port | quote }}
  prometheus.io/path: /metrics
  {{- end }}
  {{- with .root.Values.podAnnotations }}
  {{- toYaml . | nindent 2 }}
  {{- end }}
{{- end -}}

{{/* Flags every daemon takes: identity, gossip, operator endpoint, TLS. */}}
{{- define "sparrowfleet.daemonArgs" -}}
- --name=$(POD_NAME)
- --gossip=$(POD_IP):{{ .Values.gossip.port }}
- --join={{ include "sparrowfleet.gossipService" . }}.{{ .Release.Namespace }}.svc:{{ .Values.gossip.port }}
- --gossip-profile={{ .Values.gossip.profile }}
- --http-listen=:{{ .Values.http.port }}
{{- if .Values.http.adminTokenSecret }}
- --http-admin-token-file=/etc/sparrow/admin/token
{{- end }}
{{- if .Values.tls.enabled }}
- --tls-ca=/etc/sparrow/tls/ca.crt
- --tls-cert=/etc/sparrow/tls/tls.crt
- --tls-key=/etc/sparrow/tls/tls.key
{{- if .Values.tls.requireClientCert }}
- --tls-require-client-cert
{{- end }}
{{- end }}
{{- end -}}

{{/* Environment every daemon takes. */}}
{{- define "sparrowfleet.daemonEnv" -}}
- name: POD_NAME
  valueFrom:
    fieldRef:
      fieldPath: metadata.name
- name: POD_IP
  valueFrom:
    fieldRef:
      fieldPath: status.podIP
- name: SPARROW_LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- if .Values.gossip.keySecret }}
- name: SPARROW_GOSSIP_KEY
  valueFrom:
    secretKeyRef:
      name: {{ .Values.gossip.keySecret }}
      key: {{ .Values.gossip.keySecretKey }}
{{- end }}
{{- end -}}

{{/* Ports, probes and mounts of a daemon container. */}}
{{- define "sparrowfleet.daemonPorts" -}}
- name: gossip-tcp
  containerPort: {{ .Values.gossip.port }}
  protocol: TCP
- name: gossip-udp
  containerPort: {{ .Values.gossip.port }}
  protocol: UDP
- name: http
  containerPort: {{ .Values.http.port }}
  protocol: TCP
{{- end -}}

{{- define "sparrowfleet.probes" -}}
livenessProbe:
  httpGet:
    path: /livez
    port: http
  periodSeconds: 10
  failureThreshold: 3
readinessProbe:
  httpGet:
    path: /readyz
    port: http
  periodSeconds: 2
  failureThreshold: 1
{{- end -}}

{{/* daemonMounts: the volume mounts of a daemon container, as list items. */}}
{{- define "sparrowfleet.daemonMounts" -}}
{{- include "sparrowfleet.tlsMount" . }}
{{- if .Values.http.adminTokenSecret }}
- name: admin-token
  mountPath: /etc/sparrow/admin
  readOnly: true
{{- end }}
{{- end -}}

{{- define "sparrowfleet.tlsMount" -}}
{{- if .Values.tls.enabled }}
- name: tls
  mountPath: /etc/sparrow/tls
  readOnly: true
{{- end }}
{{- end -}}

{{/* daemonVolumes: the volumes daemonMounts mounts, as list items. */}}
{{- define "sparrowfleet.daemonVolumes" -}}
{{- if .Values.tls.enabled }}
- name: tls
  {{- if .Values.tls.volume }}
  {{- toYaml .Values.tls.volume | nindent 2 }}
  {{- else }}
  secret:
    secretName: {{ required "tls.enabled needs tls.secretName or tls.volume" .Values.tls.secretName }}
  {{- end }}
{{- end }}
{{- if .Values.http.adminTokenSecret }}
- name: admin-token
  secret:
    secretName: {{ .Values.http.adminTokenSecret }}
    items:
      - key: {{ .Values.http.adminTokenSecretKey }}
        path: token
{{- end }}
{{- end -}}

{{/* apiAccess: a projected volume with the pod's service account token, the
cluster CA and the namespace, where client libraries look for them. */}}
{{- define "sparrowfleet.apiAccessVolume" -}}
- name: kube-api-access
  projected:
    sources:
      - serviceAccountToken:
          path: token
          expirationSeconds: 3607
      - configMap:
          name: kube-root-ca.crt
          items:
            - key: ca.crt
              path: ca.crt
      - downwardAPI:
          items:
            - path: namespace
              fieldRef:
                fieldPath: metadata.namespace
{{- end -}}

{{- define "sparrowfleet.apiAccessMount" -}}
- name: kube-api-access
  mountPath: /var/run/secrets/kubernetes.io/serviceaccount
  readOnly: true
{{- end -}}

{{/* Pod-level settings shared by every component ("component" and "values" in dict). */}}
{{- define "sparrowfleet.podSpec" -}}
automountServiceAccountToken: false
enableServiceLinks: false
{{- with .root.Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
securityContext:
  {{- toYaml .root.Values.podSecurityContext | nindent 2 }}
{{- with .values.nodeSelector }}
nodeSelector:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- with .values.tolerations }}
tolerations:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end -}}

{{/* nodeMonitorServiceAccount: the node monitor pod's service account, ""
for none. A pod has one: the one executors name (all must agree), else one
the chart creates when the node monitor watches its Node. */}}
{{- define "sparrowfleet.nodeMonitorServiceAccount" -}}
{{- $named := list }}
{{- range .Values.nodeMonitor.executors }}
{{- with .serviceAccountName }}
{{- $named = append $named . }}
{{- end }}
{{- end }}
{{- $named = uniq $named }}
{{- if gt (len $named) 1 }}
{{- fail (printf "nodeMonitor.executors name the service accounts %s: executors share their node monitor's pod, which has one service account, so every executor that names one must name the same" (join ", " $named)) }}
{{- end }}
{{- if $named }}
{{- first $named }}
{{- else if .Values.nodeMonitor.watchCordon }}
{{- include "sparrowfleet.fullname" . }}-nodemonitor
{{- end }}
{{- end -}}
