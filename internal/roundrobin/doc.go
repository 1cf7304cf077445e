// Package roundrobin is a plain round-robin HTTP load balancer with no
// stickiness, standing in for the nginx or Kubernetes Service in front of
// mcphost's replicas in tests and in the load tool's cluster run.
//
// A [Balancer] sends each request to the next of its targets ([Balancer.Set]
// replaces them, as an endpoint update does). Request bodies are read whole
// before they are sent on, as nginx does by default: streamed through
// httputil.ReverseProxy, a body races its server-sent answer. Answers are
// flushed as they come (server-sent events pass through). With
// [Balancer.Check] it also health-checks its targets as a balancer does: a
// target whose check fails is taken out of rotation until it passes again.
//
// It is test and benchmark infrastructure, not a production proxy: it has
// no timeouts of its own, no retries and no limits.
package roundrobin
