package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/mcphost/mcphost/cluster"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/host/store"
	"github.com/mcphost/mcphost/oauth"
)

// replicaFlags are serve's flags for running as one replica of several.
type replicaFlags struct {
	id, advertise, readyFile *string
	grace                    *time.Duration
}

func addReplicaFlags(fs *flag.FlagSet) replicaFlags {
	return replicaFlags{
		id:        fs.String("replica-id", "", "this replica's `ID` (default $"+cluster.EnvReplicaID+", else the host name and a random suffix): 1 to 63 of a-z, 0-9, '-'"),
		advertise: fs.String("advertise", "", "the `URL` other replicas reach this one at (default $"+cluster.EnvAdvertise+", else http://<bound listen address>)"),
		readyFile: fs.String("ready-file", "", "write the bound base URL to `FILE` once listening (for scripts and tests that listen on port 0)"),
		grace:     fs.Duration("shutdown-grace", host.DefaultShutdownGrace, "how long running calls may finish after SIGTERM or SIGINT (`DURATION`); /readyz is unready and new calls are refused meanwhile"),
	}
}

// replicaDirectory returns the directory of replicas in st when st is
// shared (PostgreSQL): the daemon is then a replica of a cluster. On a
// SQLite file it returns nil, a single node, and nothing changes: no
// heartbeat, no forwarding, go-sdk's own session ids.
func replicaDirectory(st *store.Store) cluster.Directory {
	if st == nil || !st.Shared() {
		return nil
	}
	return storeDirectory{st}
}

// replicaID is this daemon's replica id: -replica-id, then
// MCPHOST_REPLICA_ID, else one made from the host name.
func replicaID(rf replicaFlags) (string, error) {
	hostname, _ := os.Hostname()
	return cluster.ResolveID(*rf.id, os.Getenv(cluster.EnvReplicaID), hostname)
}

// storeDirectory is the store's replicas table as a cluster.Directory.
type storeDirectory struct{ st *store.Store }

func (d storeDirectory) PutReplica(ctx context.Context, r cluster.Replica) error {
	return d.st.PutReplica(ctx, store.Replica{ID: r.ID, Addr: r.Addr, Started: r.Started, Seen: r.Seen, Draining: r.Draining})
}

func (d storeDirectory) Replicas(ctx context.Context) ([]cluster.Replica, error) {
	rs, err := d.st.Replicas(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]cluster.Replica, len(rs))
	for i, r := range rs {
		out[i] = cluster.Replica{ID: r.ID, Addr: r.Addr, Started: r.Started, Seen: r.Seen, Draining: r.Draining}
	}
	return out, nil
}

func (d storeDirectory) DeleteReplica(ctx context.Context, id string) error {
	return d.st.DeleteReplica(ctx, id)
}

func (d storeDirectory) SweepReplicas(ctx context.Context, seenBefore time.Time) (int64, error) {
	return d.st.SweepReplicas(ctx, seenBefore)
}

// clusterSecret returns the secret the replicas share when the daemon
// needs one: on PostgreSQL (it is a replica: its hops and pokes are signed
// with it) or when MCPHOST_CLUSTER_SECRET is set; nil otherwise. A key in
// the environment is the same on every replica; the secret.key file in
// data_dir is not.
func clusterSecret(cfg *config.Config) ([]byte, error) {
	if cfg.Store.Postgres == "" && os.Getenv(cluster.EnvSecret) == "" {
		return nil, nil
	}
	return cluster.SharedSecret(os.Getenv(cluster.EnvSecret), os.Getenv(oauth.KeyEnv))
}

// newReplica builds this daemon's cluster node for the bound listener ln,
// with secret ([clusterSecret]). sealKey is the key the gateway seals
// requestState with when it must be the same on every replica (nil: the
// host's own, derived from its credential key).
func newReplica(rf replicaFlags, id string, ln net.Listener, dir cluster.Directory, secret []byte, logger *slog.Logger) (node *cluster.Node, sealKey []byte, err error) {
	hostname, _ := os.Hostname()
	addr := *rf.advertise
	if addr == "" {
		addr = os.Getenv(cluster.EnvAdvertise)
	}
	if addr == "" {
		addr = defaultAdvertise(ln.Addr().(*net.TCPAddr), hostname)
	}
	if secret != nil {
		sealKey = cluster.DeriveKey(secret, "gateway requestState")
	}
	node, err = cluster.New(cluster.Options{ID: id, Addr: addr, Directory: dir, Secret: secret, Logger: logger})
	if err != nil {
		return nil, nil, err
	}
	return node, sealKey, nil
}

// credentialKey returns the key the WebShell credentials are derived
// with. A single node keeps it in data_dir (credentialKeyFile, created on
// first use), so that a signed-in WebShell stays signed in across
// restarts. A replica derives it from the cluster secret, the same on
// every replica, so that a credential one replica issued is good on the
// others: behind a balancer the WebShell's next request may land on any.
func credentialKey(dataDir string, node *cluster.Node, secret []byte) ([]byte, error) {
	if node.Clustered() {
		return cluster.DeriveKey(secret, "webshell credential"), nil
	}
	k, err := loadOrCreateSecret(filepath.Join(dataDir, credentialKeyFile), "the WebShell credential key")
	if err != nil {
		return nil, err
	}
	return []byte(k), nil
}

// mountRelay serves the host's relay path, where the other replicas reach the
// singleton servers this one runs, ahead of rest: behind the node's
// hop-only front, which lets through only requests with a verified proof
// of their own (a client's, a replayed or a stale one is 403) and never
// forwards, and outside the JSON API's Host and Origin checks, since
// replicas call each other by their advertised addresses. A single node
// has no relay.
func mountRelay(node *cluster.Node, h *host.Host, rest http.Handler) http.Handler {
	if !node.Clustered() {
		return rest
	}
	path, handler := h.RelayHandler()
	relay := node.HopOnly(handler)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if strings.HasPrefix(r.URL.Path, path) {
			relay.ServeHTTP(w, r)
			return
		}
		rest.ServeHTTP(w, r)
	})
}

// defaultAdvertise is http://<bound address>; an unspecified address
// (0.0.0.0, ::) is replaced by the host name, which other machines may or
// may not resolve: a cluster sets -advertise (in Kubernetes, from the pod
// IP).
func defaultAdvertise(a *net.TCPAddr, hostname string) string {
	h := a.IP.String()
	if a.IP.IsUnspecified() {
		h = hostname
		if h == "" {
			h = "127.0.0.1"
		}
	}
	return "http://" + net.JoinHostPort(h, strconv.Itoa(a.Port))
}

// writeReadyFile writes base (no trailing slash) and a newline to path,
// atomically, and returns the function that removes it again.
func writeReadyFile(path, base string) (remove func(), err error) {
	if path == "" {
		return func() {}, nil
	}
	if err := writeFileAtomic(path, []byte(base+"\n"), 0o644); err != nil {
		return nil, fmt.Errorf("-ready-file: %v", err)
	}
	abs, _ := filepath.Abs(path)
	return func() { _ = os.Remove(abs) }, nil
}

// runReplica heartbeats until the returned stop is called; when ctx ends
// (SIGTERM) it marks the node draining at once. stop ends the heartbeat
// and leaves the directory.
func runReplica(ctx context.Context, node *cluster.Node, logger *slog.Logger) (stop func()) {
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	beat := make(chan struct{})
	go func() { defer close(beat); node.Run(rctx) }()
	drained := make(chan struct{})
	go func() {
		defer close(drained)
		select {
		case <-ctx.Done():
			dctx, dcancel := context.WithTimeout(rctx, 5*time.Second)
			node.Drain(dctx)
			dcancel()
		case <-rctx.Done():
		}
	}()
	return func() {
		cancel()
		<-beat
		<-drained
		lctx, lcancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer lcancel()
		if err := node.Leave(lctx); err != nil {
			logger.Warn("leaving the directory of replicas failed; the others see this replica gone after three heartbeats", "err", err)
		}
	}
}
