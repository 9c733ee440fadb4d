{{- define "reviews.name" -}}
{{- .Release.Name }}-reviews
{{- end -}}

{{- define "reviews.labels" -}}
app: {{ include "reviews.name" . }}
{{- end -}}
