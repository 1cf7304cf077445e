package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/mcphost/mcphost/cluster"
	"github.com/mcphost/mcphost/internal/clustertest"
)

// TestCredentialKey: a single node keeps the WebShell credential key in
// data_dir, the same across restarts, whether or not a cluster secret is
// set; replicas derive it from the cluster secret, the same on each
// whatever its data_dir, and write no file.
func TestCredentialKey(t *testing.T) {
	secret := []byte("cluster-secret-of-the-credential-key-test")
	node := func(id string, dir cluster.Directory, secret []byte) *cluster.Node {
		t.Helper()
		n, err := cluster.New(cluster.Options{ID: id, Addr: "http://127.0.0.1:1", Directory: dir, Secret: secret})
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	key := func(dataDir string, n *cluster.Node, secret []byte) []byte {
		t.Helper()
		k, err := credentialKey(dataDir, n, secret)
		if err != nil || len(k) == 0 {
			t.Fatalf("credentialKey: %q, %v", k, err)
		}
		return k
	}

	single := t.TempDir()
	first := key(single, node("a", nil, nil), nil)
	if again := key(single, node("a", nil, secret), secret); !bytes.Equal(again, first) {
		t.Error("a single node's key changed across a restart (with MCPHOST_CLUSTER_SECRET set)")
	}
	if _, err := os.Stat(filepath.Join(single, credentialKeyFile)); err != nil {
		t.Errorf("a single node keeps no %s: %v", credentialKeyFile, err)
	}

	dir := &clustertest.Directory{}
	d1, d2 := t.TempDir(), t.TempDir()
	k1, k2 := key(d1, node("a", dir, secret), secret), key(d2, node("b", dir, secret), secret)
	if !bytes.Equal(k1, k2) {
		t.Error("two replicas with one cluster secret derive different WebShell credential keys")
	}
	if bytes.Equal(k1, first) || bytes.Equal(k1, cluster.DeriveKey(secret, "hop")) {
		t.Error("the replicas' WebShell credential key is another key")
	}
	otherSecret := []byte("another-cluster-secret-0123456789")
	if other := key(d1, node("a", dir, otherSecret), otherSecret); bytes.Equal(other, k1) {
		t.Error("another cluster secret gives the same WebShell credential key")
	}
	for _, d := range []string{d1, d2} {
		if _, err := os.Stat(filepath.Join(d, credentialKeyFile)); !os.IsNotExist(err) {
			t.Errorf("a replica wrote %s in its data_dir (%v)", credentialKeyFile, err)
		}
	}
}
