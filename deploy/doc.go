// Package deploy holds no code: it is the directory of the deployment
// examples (Dockerfile, compose.yaml with nginx.conf, kubernetes/,
// local-cluster.sh, and mcphost.hcl, the config every replica of them
// reads) and of the tests that keep them true.
//
// Docker is not available where the tests run, so the tests check the files
// themselves (they parse; every replica runs the same command with the same
// config; each flag exists in `mcphost serve`; each variable the config reads
// is set; the load balancer and the probes name what the daemon serves), and
// then start the cluster the files describe by hand: a real PostgreSQL, two
// `mcphost serve` processes run with compose.yaml's command and environment,
// and a plain round-robin load balancer in front of them.
package deploy
