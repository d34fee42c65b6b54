// Package helmtest renders the sparrowfleet Helm chart (deploy/helm) with
// Helm's Go library and checks what it renders against the Kubernetes API
// types and against the sparrow binary itself: every flag, port, probe
// path and environment variable the chart uses must exist in the binary,
// so the chart cannot drift from the code.
//
// It is a module of its own so that the product's go.mod does not carry
// Helm's and Kubernetes' dependencies. It holds tests only.
package helmtest
