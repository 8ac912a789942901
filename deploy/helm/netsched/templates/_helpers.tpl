{{/*
Labels on every object's metadata: deploy/'s app.kubernetes.io/part-of, Helm's
managed-by, and the chart and release. Pod templates and selectors carry only
deploy/'s labels, so a release can take over objects `kubectl apply -k deploy/`
made (selectors are immutable) and the comparison with deploy/ stays exact.
*/}}
{{- define "netsched.labels" -}}
app.kubernetes.io/part-of: netsched
app.kubernetes.io/managed-by: {{ .Release.Service }}
app.kubernetes.io/instance: {{ .Release.Name }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version | replace "+" "_" }}
{{- end }}

{{- define "netsched.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag | default .Chart.AppVersion }}
{{- end }}

{{- define "netsched.imagePullSecrets" -}}
{{- with .Values.imagePullSecrets }}
imagePullSecrets:
  {{- toYaml . | nindent 2 }}
{{- end }}
{{- end }}

{{/* The KubeSchedulerConfiguration API: the value, or the cluster's version's. */}}
{{- define "netsched.schedulerConfigApi" -}}
{{- $v := .Values.scheduler.configApiVersion -}}
{{- if eq $v "auto" -}}
{{- if semverCompare "<1.23-0" .Capabilities.KubeVersion.Version -}}v1beta1
{{- else if semverCompare "<1.25-0" .Capabilities.KubeVersion.Version -}}v1beta3
{{- else -}}v1{{- end -}}
{{- else -}}{{ $v }}{{- end -}}
{{- end }}

{{/*
policy/v1 PodDisruptionBudgets are 1.21+: what the cluster serves (helm install),
and the version given (helm template --kube-version, whose API list is Helm's own).
*/}}
{{- define "netsched.pdbApi" -}}
{{- if and (.Capabilities.APIVersions.Has "policy/v1") (semverCompare ">=1.21-0" .Capabilities.KubeVersion.Version) -}}policy/v1{{- else -}}policy/v1beta1{{- end -}}
{{- end }}

{{/*
The extender entry of both ways (deploy/scheduler/kube-scheduler-config*.yaml and
deploy/control-plane/scheduler-config*.yaml). dict: root, url, certDir, serverName.
*/}}
{{- define "netsched.extender" -}}
{{- $s := .root.Values.scheduler -}}
extenders:
  # POST <urlPrefix>/filter, /prioritize and /preempt.
  - urlPrefix: {{ .url | quote }}
    {{- if not $s.prioritizeOnly }}
    filterVerb: "filter"
    {{- end }}
    prioritizeVerb: "prioritize"
    {{- if not $s.prioritizeOnly }}
    # Preemption skips extender filters: netsched says which candidate nodes its
    # filter would still reject (docs/extender-protocol.md, "preempt").
    preemptVerb: "preempt"
    {{- end }}
    # score (0..10) x weight x 10 is added to each node's total
    # (docs/operating.md, "Tune the weight").
    weight: {{ $s.weight }}
    # Node names only, not full Node objects.
    nodeCacheCapable: true
    # A scorer outage never stops scheduling.
    ignorable: true
    # A hung scorer costs each pod this twice (filter, then prioritize).
    httpTimeout: {{ $s.httpTimeout }}
    # Mutual TLS: the scorer answers the verbs only for this client certificate.
    enableHTTPS: true
    tlsConfig:
      {{- with .serverName }}
      serverName: {{ . }}
      {{- end }}
      certFile: {{ .certDir }}/tls.crt
      keyFile: {{ .certDir }}/tls.key
      caFile: {{ .certDir }}/ca.crt
{{- end }}
