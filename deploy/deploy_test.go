package deploy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.yaml.in/yaml/v3"

	"github.com/mcphost/mcphost/confine"
	"github.com/mcphost/mcphost/internal/pgtest"
	"github.com/mcphost/mcphost/internal/roundrobin"
	"github.com/mcphost/mcphost/internal/testbin"
)

func TestMain(m *testing.M) {
	confine.MaybeHelper() // the sandbox helper of the stdio servers the tests start
	code := pgtest.Main(m)
	testbin.Cleanup()
	os.Exit(code)
}

// waitBound bounds every wait of these tests; none of them is a timing
// assertion.
const waitBound = 60 * time.Second

// The two replicas of compose.yaml.
var replicaServices = []string{"mcphost-1", "mcphost-2"}

type composeService struct {
	Command     []string          `yaml:"command"`
	Environment map[string]string `yaml:"environment"`
	Volumes     []string          `yaml:"volumes"`
	Healthcheck struct {
		Test []string `yaml:"test"`
	} `yaml:"healthcheck"`
	StopGracePeriod string `yaml:"stop_grace_period"`
}

type composeFile struct {
	Services map[string]composeService `yaml:"services"`
}

func readCompose(t *testing.T) composeFile {
	t.Helper()
	b, err := os.ReadFile("compose.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(b, &c); err != nil {
		t.Fatalf("compose.yaml: %v", err)
	}
	for _, name := range replicaServices {
		if _, ok := c.Services[name]; !ok {
			t.Fatalf("compose.yaml has no service %q", name)
		}
	}
	return c
}

type k8sContainer struct {
	Args []string `yaml:"args"`
	Env  []struct {
		Name      string `yaml:"name"`
		Value     string `yaml:"value"`
		ValueFrom *struct {
			FieldRef *struct {
				FieldPath string `yaml:"fieldPath"`
			} `yaml:"fieldRef"`
			SecretKeyRef *struct {
				Name string `yaml:"name"`
				Key  string `yaml:"key"`
			} `yaml:"secretKeyRef"`
		} `yaml:"valueFrom"`
	} `yaml:"env"`
	ReadinessProbe struct {
		HTTPGet struct {
			Path string `yaml:"path"`
		} `yaml:"httpGet"`
	} `yaml:"readinessProbe"`
	LivenessProbe struct {
		HTTPGet struct {
			Path string `yaml:"path"`
		} `yaml:"httpGet"`
	} `yaml:"livenessProbe"`
}

type k8sDoc struct {
	Kind string `yaml:"kind"`
	Spec struct {
		Replicas int `yaml:"replicas"`
		Template struct {
			Spec struct {
				TerminationGracePeriodSeconds int            `yaml:"terminationGracePeriodSeconds"`
				Containers                    []k8sContainer `yaml:"containers"`
			} `yaml:"spec"`
		} `yaml:"template"`
	} `yaml:"spec"`
}

func readDeployment(t *testing.T) k8sDoc {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("kubernetes", "mcphost.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var dep *k8sDoc
	kinds := []string{}
	for {
		var d k8sDoc
		if err := dec.Decode(&d); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("kubernetes/mcphost.yaml: %v", err)
		}
		kinds = append(kinds, d.Kind)
		if d.Kind == "Deployment" {
			dep = &d
		}
	}
	if dep == nil || !slices.Contains(kinds, "Service") {
		t.Fatalf("kubernetes/mcphost.yaml holds %v, want a Deployment and a Service", kinds)
	}
	if n := len(dep.Spec.Template.Spec.Containers); n != 1 {
		t.Fatalf("the Deployment has %d containers, want 1", n)
	}
	return *dep
}

// flagValue returns the value after flag in args.
func flagValue(args []string, flag string) (string, bool) {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return "", false
	}
	return args[i+1], true
}

// withoutFlag returns args without flag and its value.
func withoutFlag(args []string, flag string) []string {
	i := slices.Index(args, flag)
	if i < 0 || i+1 >= len(args) {
		return args
	}
	return slices.Concat(args[:i], args[i+2:])
}

// configEnv lists the variables deploy/mcphost.hcl reads with env(), and
// whether each has a default.
func configEnv(t *testing.T) map[string]bool {
	t.Helper()
	b, err := os.ReadFile("mcphost.hcl")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]bool{}
	for _, m := range regexp.MustCompile(`env\("([A-Z0-9_]+)"(\s*,)?`).FindAllStringSubmatch(string(b), -1) {
		out[m[1]] = out[m[1]] || m[2] != ""
	}
	if len(out) == 0 {
		t.Fatal("mcphost.hcl reads no variable with env(); the test's pattern is out of date")
	}
	return out
}

// serveFlags are the flags `mcphost serve` accepts, read from its usage.
func serveFlags(t *testing.T, bin string) []string {
	t.Helper()
	out, _ := exec.Command(bin, "serve", "-h").CombinedOutput()
	var flags []string
	for _, m := range regexp.MustCompile(`(?m)^\s+(-[a-z-]+)`).FindAllStringSubmatch(string(out), -1) {
		flags = append(flags, m[1])
	}
	if !slices.Contains(flags, "-config") {
		t.Fatalf("mcphost serve -h lists no -config flag:\n%s", out)
	}
	return flags
}

// TestDeployFilesAgree checks the deployment examples against each other
// and against the daemon, since Docker is not here to run them: the same
// command and config on every replica, every flag and variable real, the
// probes and the load balancer pointing at what the daemon serves.
func TestDeployFilesAgree(t *testing.T) {
	bin := testbin.Build(t, "github.com/mcphost/mcphost/cmd/mcphost")
	c := readCompose(t)
	dep := readDeployment(t)
	known := serveFlags(t, bin)
	vars := configEnv(t)

	first := c.Services[replicaServices[0]]
	base := withoutFlag(first.Command, "-replica-id")
	for _, name := range replicaServices {
		s := c.Services[name]
		if s.Command[0] != "serve" {
			t.Errorf("%s runs %q, want serve", name, s.Command)
		}
		if id, _ := flagValue(s.Command, "-replica-id"); id != name {
			t.Errorf("%s: -replica-id %q, want the service's name", name, id)
		}
		if got := withoutFlag(s.Command, "-replica-id"); !slices.Equal(got, base) {
			t.Errorf("%s runs %q, want the same command as %s (%q) but for -replica-id", name, got, replicaServices[0], base)
		}
		for _, a := range s.Command[1:] {
			if strings.HasPrefix(a, "-") && !slices.Contains(known, a) {
				t.Errorf("%s: flag %s is not a flag of mcphost serve (%v)", name, a, known)
			}
		}
		if cfg, _ := flagValue(s.Command, "-config"); !slices.Contains(s.Volumes, "./mcphost.hcl:"+cfg+":ro") {
			t.Errorf("%s reads -config %s, which is not deploy/mcphost.hcl mounted read-only (volumes %q)", name, cfg, s.Volumes)
		}
		for v, hasDefault := range vars {
			if _, ok := s.Environment[v]; !ok && !hasDefault {
				t.Errorf("%s does not set %s, which mcphost.hcl reads without a default", name, v)
			}
		}
		for _, v := range []string{"DATABASE_URL", "MCPHOST_CLUSTER_SECRET", "MCPHOST_SECRET_KEY", "MCPHOST_ADVERTISE_URL"} {
			if _, ok := s.Environment[v]; !ok {
				t.Errorf("%s does not set %s", name, v)
			}
		}
		if want := "http://" + name + ":7777"; s.Environment["MCPHOST_ADVERTISE_URL"] != want {
			t.Errorf("%s advertises %q, want %q", name, s.Environment["MCPHOST_ADVERTISE_URL"], want)
		}
		if h := strings.Join(s.Healthcheck.Test, " "); !strings.Contains(h, "/readyz") {
			t.Errorf("%s's health check %q does not ask /readyz", name, h)
		}
	}
	for _, shared := range []string{"DATABASE_URL", "MCPHOST_CLUSTER_SECRET", "MCPHOST_SECRET_KEY"} {
		if a, b := c.Services["mcphost-1"].Environment[shared], c.Services["mcphost-2"].Environment[shared]; a != b {
			t.Errorf("%s differs between the replicas: %q and %q", shared, a, b)
		}
	}

	// Kubernetes: the same command; the replica id from the pod's name.
	ctr := dep.Spec.Template.Spec.Containers[0]
	if !slices.Equal(ctr.Args, base) {
		t.Errorf("the Deployment runs %q, want compose.yaml's command without -replica-id: %q", ctr.Args, base)
	}
	env := map[string]bool{}
	for _, e := range ctr.Env {
		env[e.Name] = true
		if e.Name == "MCPHOST_REPLICA_ID" && (e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name") {
			t.Errorf("MCPHOST_REPLICA_ID does not come from the pod's name")
		}
	}
	for v := range first.Environment {
		if !env[v] {
			t.Errorf("the Deployment does not set %s, which compose.yaml does", v)
		}
	}
	if !env["MCPHOST_REPLICA_ID"] {
		t.Error("the Deployment does not set MCPHOST_REPLICA_ID")
	}
	if p := ctr.ReadinessProbe.HTTPGet.Path; p != "/readyz" {
		t.Errorf("readiness probe %q, want /readyz", p)
	}
	if p := ctr.LivenessProbe.HTTPGet.Path; p != "/healthz" {
		t.Errorf("liveness probe %q, want /healthz", p)
	}
	grace, _ := flagValue(base, "-shutdown-grace")
	if d, err := time.ParseDuration(grace); err != nil || time.Duration(dep.Spec.Template.Spec.TerminationGracePeriodSeconds)*time.Second <= d {
		t.Errorf("terminationGracePeriodSeconds %d is not longer than -shutdown-grace %s", dep.Spec.Template.Spec.TerminationGracePeriodSeconds, grace)
	}
	if dep.Spec.Replicas < 2 {
		t.Errorf("the Deployment runs %d replicas, want at least 2", dep.Spec.Replicas)
	}

	// The load balancer sends to both replicas, without buffering streams.
	ngx, err := os.ReadFile("nginx.conf")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"server mcphost-1:7777;", "server mcphost-2:7777;", "proxy_buffering off;", "proxy_http_version 1.1;"} {
		if !bytes.Contains(ngx, []byte(want)) {
			t.Errorf("nginx.conf lacks %q", want)
		}
	}

	// The script that starts the same cluster by hand: same config and flags.
	sh, err := os.ReadFile("local-cluster.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`-config "$root/deploy/mcphost.hcl"`, `-replica-id "mcphost-$i"`, "-shutdown-grace " + grace, "MCPHOST_CLUSTER_SECRET", "MCPHOST_SECRET_KEY", "DATABASE_URL", "MCPHOST_ADVERTISE_URL"} {
		if !bytes.Contains(sh, []byte(want)) {
			t.Errorf("local-cluster.sh lacks %q", want)
		}
	}
	if out, err := exec.Command("bash", "-n", "local-cluster.sh").CombinedOutput(); err != nil {
		t.Errorf("bash -n local-cluster.sh: %v\n%s", err, out)
	}

	// The config validates with compose.yaml's environment.
	cmd := exec.Command(bin, "validate", "mcphost.hcl")
	cmd.Env = append(os.Environ(), replicaEnv(first.Environment, map[string]string{
		"DATABASE_URL": "postgres://mcphost:secret@postgres:5432/mcphost?sslmode=disable",
	})...)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("mcphost validate -config deploy/mcphost.hcl with compose.yaml's environment: %v\n%s", err, out)
	}
}

// replicaEnv turns a service's environment into KEY=VALUE pairs: values
// in override replace compose.yaml's, and ${VAR…} interpolations become
// test values.
func replicaEnv(env, override map[string]string) []string {
	interp := regexp.MustCompile(`\$\{[^}]*\}`)
	var out []string
	for k, v := range env {
		if o, ok := override[k]; ok {
			v = o
		} else {
			v = interp.ReplaceAllString(v, "test-value-0123456789abcdef0123456789abcdef")
		}
		out = append(out, k+"="+v)
	}
	return out
}

// replica is one mcphost process of the cluster.
type replica struct {
	name string
	cmd  *exec.Cmd
	base string // its own URL, from -ready-file
	log  *bytes.Buffer
}

type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

const aliceToken = "alice-token-for-the-cluster-test-0123456789"

// startReplica runs one replica of compose.yaml: its command (with
// -ready-file added, to learn the port) and its environment, the database,
// addresses and secrets replaced by the test's.
func startReplica(t *testing.T, bin, name string, s composeService, env map[string]string) *replica {
	t.Helper()
	dir := t.TempDir()
	ready := filepath.Join(dir, "ready")
	args := slices.Clone(s.Command)
	i := slices.Index(args, "-config")
	args[i+1] = "mcphost.hcl"
	args = append(args, "-ready-file", ready)
	override := map[string]string{"MCPHOST_ADVERTISE_URL": ""}
	for k, v := range env {
		override[k] = v
	}
	override["MCPHOST_DATA_DIR"] = filepath.Join(dir, "data")
	var pairs []string
	for _, kv := range replicaEnv(s.Environment, override) {
		if !strings.HasSuffix(kv, "=") { // an empty advertise URL: the bound address
			pairs = append(pairs, kv)
		}
	}
	pairs = append(pairs, "MCPHOST_DATA_DIR="+override["MCPHOST_DATA_DIR"], "MCPHOST_LISTEN=127.0.0.1:0")
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), pairs...)
	r := &replica{name: name, cmd: cmd, log: &bytes.Buffer{}}
	out := &lockedWriter{w: r.log}
	cmd.Stdout, cmd.Stderr = out, out // one lock for both: exec copies each on a goroutine of its own
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("%s's log:\n%s", name, r.log)
		}
	})
	deadline := time.Now().Add(waitBound)
	for {
		if b, err := os.ReadFile(ready); err == nil && len(b) > 0 {
			r.base = strings.TrimSpace(string(b))
			break
		}
		if time.Now().After(deadline) || cmd.ProcessState != nil {
			t.Fatalf("%s did not start; its log:\n%s", name, r.log)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return r
}

// startReplicas starts the replicas of compose.yaml, in replicaServices
// order, each ready before the next starts (the first takes the
// singleton's lock).
func startReplicas(t *testing.T, bin string, c composeFile, env map[string]string) []*replica {
	t.Helper()
	var reps []*replica
	for _, name := range replicaServices {
		r := startReplica(t, bin, name, c.Services[name], env)
		waitReady(t, r)
		reps = append(reps, r)
	}
	return reps
}

// urlsOf is the balancer's targets: the replicas' own URLs.
func urlsOf(reps ...*replica) []*url.URL {
	var out []*url.URL
	for _, r := range reps {
		u, _ := url.Parse(r.base)
		out = append(out, u)
	}
	return out
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func getJSON(t *testing.T, url string, v any) int {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, url, nil)
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("GET %s: %v", url, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if v != nil && res.StatusCode == http.StatusOK {
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("GET %s: %v: %s", url, err, b)
		}
	}
	return res.StatusCode
}

// waitReady waits until the replica's /readyz says ready and its servers
// (revenue, and notes, run here or relayed to the replica that runs it)
// are ready.
func waitReady(t *testing.T, r *replica) {
	t.Helper()
	deadline := time.Now().Add(waitBound)
	for {
		var rd struct {
			Status, Replica string
		}
		var st struct {
			Servers []struct{ Name, Status string } `json:"servers"`
		}
		if getJSON(t, r.base+"/readyz", &rd) == http.StatusOK && rd.Replica == r.name &&
			getJSON(t, r.base+"/api/v1/servers", &st) == http.StatusOK && len(st.Servers) == 2 &&
			!slices.ContainsFunc(st.Servers, func(s struct{ Name, Status string }) bool { return s.Status != "ready" }) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s is not ready: readyz %+v, servers %+v", r.name, rd, st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func connect(t *testing.T, lb, version string) (*mcp.ClientSession, error) {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "cluster-test-" + version, Version: "1.0"}, nil)
	tr := &mcp.StreamableClientTransport{Endpoint: lb + "/mcp",
		HTTPClient: &http.Client{Transport: bearer{token: aliceToken, next: http.DefaultTransport}}}
	ctx, cancel := context.WithTimeout(t.Context(), waitBound)
	defer cancel()
	return client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
}

func callRevenue(ctx context.Context, cs *mcp.ClientSession, quarter string) error {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "revenue__show_revenue_dashboard", Arguments: map[string]any{"quarter": quarter}})
	if err != nil {
		return err
	}
	if res.IsError {
		return fmt.Errorf("the call failed: %v", res.Content)
	}
	return nil
}

// gatewayEntries counts the entries of the gateway's sessions as replica r
// lists them from the shared store.
func gatewayEntries(t *testing.T, r *replica) int {
	t.Helper()
	var ss struct {
		Sessions []struct {
			ID      string `json:"id"`
			Entries int    `json:"entries"`
		} `json:"sessions"`
	}
	if code := getJSON(t, r.base+"/api/v1/sessions", &ss); code != http.StatusOK {
		t.Fatalf("%s: GET /api/v1/sessions: %d", r.name, code)
	}
	n := 0
	for _, s := range ss.Sessions {
		n += s.Entries
	}
	return n
}

// clusterEnv is what the test gives the replicas in place of
// compose.yaml's values: the database, the shared secrets, the balancer's
// URL and alice's token.
func clusterEnv(dsn, lb string) map[string]string {
	return map[string]string{
		"DATABASE_URL":           dsn,
		"MCPHOST_CLUSTER_SECRET": "cluster-secret-for-the-test-0123456789abcdef",
		"MCPHOST_SECRET_KEY":     "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY=",
		"MCPHOST_PUBLIC_URL":     lb,
		"ALICE_TOKEN":            aliceToken,
	}
}

// TestComposeCluster starts the cluster of compose.yaml by hand: a real
// PostgreSQL, the two replicas with compose.yaml's command and environment
// and the shared deploy/mcphost.hcl, and a plain round-robin balancer. A
// 2025-11-25 client keeps its session through the balancer (the replica
// that does not own it forwards), a 2026-07-28 client is served by either,
// both replicas show every call from the shared transcript, the WebShell
// answers through the balancer's public URL, and when the owner of a
// legacy session is killed the client gets 404 and starts over on the
// survivor.
func TestComposeCluster(t *testing.T) {
	c := readCompose(t)
	bin := testbin.Build(t, "github.com/mcphost/mcphost/cmd/mcphost")
	dsn := pgtest.Shared(t).NewDatabase(t)

	rr := &roundrobin.Balancer{}
	lb := httptest.NewServer(rr)
	t.Cleanup(lb.Close)
	env := clusterEnv(dsn, lb.URL)
	reps := startReplicas(t, bin, c, env)
	rr.Set(urlsOf(reps...)...)
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitBound)
	defer cancel()

	// The WebShell and the API through the balancer's public URL.
	if code := getJSON(t, lb.URL+"/api/v1/servers", nil); code != http.StatusOK {
		t.Errorf("GET /api/v1/servers through the balancer: %d, want 200 (public_urls)", code)
	}
	res, err := http.Get(lb.URL + "/")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Errorf("GET / (the WebShell) through the balancer: %d, want 200", res.StatusCode)
	}
	t.Run("webshell sign-in", func(t *testing.T) { testWebShellThroughBalancer(t, lb.URL, reps) })

	// Both eras through the balancer, several calls each: with round robin
	// every second request of the legacy session lands on the replica
	// that does not own it.
	legacy, err := connect(t, lb.URL, "2025-11-25")
	if err != nil {
		t.Fatalf("a 2025-11-25 client through the balancer: %v", err)
	}
	defer legacy.Close()
	modern, err := connect(t, lb.URL, "2026-07-28")
	if err != nil {
		t.Fatalf("a 2026-07-28 client through the balancer: %v", err)
	}
	defer modern.Close()
	const calls = 6
	for i := range calls {
		q := fmt.Sprintf("Q%d", i%4+1)
		if err := callRevenue(ctx, legacy, q); err != nil {
			t.Fatalf("legacy call %d through the balancer: %v", i, err)
		}
		if err := callRevenue(ctx, modern, q); err != nil {
			t.Fatalf("modern call %d through the balancer: %v", i, err)
		}
	}
	// Every call is in the one transcript, seen alike from either replica.
	for _, r := range reps {
		if n := gatewayEntries(t, r); n != 2*calls {
			t.Errorf("%s lists %d entries, want %d (every call made through either replica)", r.name, n, 2*calls)
		}
	}

	// The legacy session's owner dies: its session is gone (404), and a
	// new session works on the survivor.
	owner, _, _ := strings.Cut(legacy.ID(), ".")
	var dead, alive *replica
	for _, r := range reps {
		if r.name == owner {
			dead = r
		} else {
			alive = r
		}
	}
	if dead == nil {
		t.Fatalf("the legacy session id %q names no replica of %v", legacy.ID(), replicaServices)
	}
	_ = syscall.Kill(-dead.cmd.Process.Pid, syscall.SIGKILL)
	_ = dead.cmd.Wait()
	req, _ := http.NewRequest(http.MethodPost, alive.base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":9,"method":"tools/list"}`))
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", legacy.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	res, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusNotFound {
		t.Errorf("a request of the dead owner's session at %s: %d, want 404", alive.name, res.StatusCode)
	}
	rr.Set(urlsOf(alive)...) // the balancer's health check takes the dead one out
	again, err := connect(t, lb.URL, "2025-11-25")
	if err != nil {
		t.Fatalf("a new legacy session on the survivor: %v", err)
	}
	defer again.Close()
	if err := callRevenue(ctx, again, "Q1"); err != nil {
		t.Errorf("a call on the new session: %v", err)
	}
	if err := callRevenue(ctx, modern, "Q2"); err != nil {
		t.Errorf("a 2026-07-28 call after the kill: %v", err)
	}
	if n := gatewayEntries(t, alive); n != 2*calls+2 {
		t.Errorf("%s lists %d entries after the kill, want %d: nothing acknowledged is lost", alive.name, n, 2*calls+2)
	}
}

// testWebShellThroughBalancer signs in to the WebShell through the
// balancer as its page does, then uses the credential on each replica
// directly and through the balancer: every replica accepts what one of
// them issued (its key is derived from the cluster secret, not kept in
// each replica's data_dir).
func testWebShellThroughBalancer(t *testing.T, lb string, reps []*replica) {
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, lb+"/api/v1/webshell/session", nil)
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	req.Header.Set("Origin", lb)
	req.Header.Set("Sec-Fetch-Site", "same-origin")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var signIn struct {
		Credential string `json:"credential"`
	}
	err = json.NewDecoder(res.Body).Decode(&signIn)
	res.Body.Close()
	if res.StatusCode != http.StatusOK || err != nil || signIn.Credential == "" {
		t.Fatalf("WebShell sign-in through the balancer: %d, %v", res.StatusCode, err)
	}
	me := func(base string) (int, string) {
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, base+"/api/v1/me", nil)
		req.Header.Set("Authorization", "Bearer "+signIn.Credential)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var who struct {
			Name   string `json:"name"`
			Origin string `json:"origin"`
		}
		_ = json.NewDecoder(res.Body).Decode(&who)
		return res.StatusCode, who.Name + " " + who.Origin
	}
	for _, r := range reps {
		if code, who := me(r.base); code != http.StatusOK || who != "alice user" {
			t.Errorf("the WebShell credential at %s: %d %q, want 200 alice user", r.name, code, who)
		}
	}
	for i := range 2 * len(reps) { // round robin: each replica twice
		if code, who := me(lb); code != http.StatusOK || who != "alice user" {
			t.Errorf("the WebShell credential through the balancer, request %d: %d %q, want 200 alice user", i, code, who)
		}
	}
}

// notesStatus is the notes server's status on replica r.
type notesStatus struct {
	Status, Placement, RunsOn, LastError string
	PID                                  int
}

func notesOn(t *testing.T, r *replica) notesStatus {
	t.Helper()
	var st struct {
		Servers []struct {
			Name string
			notesStatus
		} `json:"servers"`
	}
	if code := getJSON(t, r.base+"/api/v1/servers", &st); code != http.StatusOK {
		t.Fatalf("%s: GET /api/v1/servers: %d", r.name, code)
	}
	for _, s := range st.Servers {
		if s.Name == "notes" {
			return s.notesStatus
		}
	}
	t.Fatalf("%s lists no notes server", r.name)
	return notesStatus{}
}

// waitNotesOn waits until every replica of reps has the notes server
// ready, run by replica on, and returns how long that took.
func waitNotesOn(t *testing.T, on string, reps ...*replica) time.Duration {
	t.Helper()
	start := time.Now()
	for {
		ok := true
		var got []string
		for _, r := range reps {
			st := notesOn(t, r)
			got = append(got, fmt.Sprintf("%s: %s on %q (%s)", r.name, st.Status, st.RunsOn, st.LastError))
			ok = ok && st.Status == "ready" && st.RunsOn == on
		}
		if ok {
			return time.Since(start)
		}
		if time.Since(start) > waitBound {
			t.Fatalf("the notes server is not ready on %s everywhere: %s", on, strings.Join(got, "; "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// addNote adds a note through the gateway session cs and returns the
// server's answer ("N notes").
func addNote(ctx context.Context, cs *mcp.ClientSession, text string) (string, error) {
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes__add_note", Arguments: map[string]any{"text": text}})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	if res.IsError {
		return "", fmt.Errorf("add_note failed: %s", b.String())
	}
	return b.String(), nil
}

// TestComposeSingleton: deploy/mcphost.hcl's notes server (placement =
// "singleton") in the cluster of compose.yaml. One replica runs the one
// process; notes added through the balancer, in both eras, land in it
// whichever replica takes the call, and each replica's transcript has the
// calls it took. When that replica is killed -9, the survivor takes the
// lock and starts a fresh process; the killed replica, started again,
// relays to the survivor.
func TestComposeSingleton(t *testing.T) {
	c := readCompose(t)
	bin := testbin.Build(t, "github.com/mcphost/mcphost/cmd/mcphost")
	dsn := pgtest.Shared(t).NewDatabase(t)
	rr := &roundrobin.Balancer{}
	lb := httptest.NewServer(rr)
	t.Cleanup(lb.Close)
	env := clusterEnv(dsn, lb.URL)
	reps := startReplicas(t, bin, c, env)
	first, second := reps[0], reps[1]
	rr.Set(urlsOf(first, second)...)
	ctx, cancel := context.WithTimeout(t.Context(), 3*waitBound)
	defer cancel()

	// The first replica started first: it runs the server, the second
	// relays to it. One process in all.
	waitNotesOn(t, first.name, first, second)
	if a, b := notesOn(t, first), notesOn(t, second); a.PID == 0 || b.PID != 0 || a.Placement != "singleton" || b.Placement != "singleton" {
		t.Fatalf("notes on %s: %+v; on %s: %+v; want one process, on %s", first.name, a, second.name, b, first.name)
	}

	// Through the balancer, both eras: every call counts in the one list.
	legacy, err := connect(t, lb.URL, "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	defer legacy.Close()
	modern, err := connect(t, lb.URL, "2026-07-28")
	if err != nil {
		t.Fatal(err)
	}
	defer modern.Close()
	const notes = 6
	for i := range notes {
		cs := legacy
		if i%2 == 1 {
			cs = modern
		}
		got, err := addNote(ctx, cs, fmt.Sprintf("note %d", i+1))
		if want := fmt.Sprintf("%d notes", i+1); err != nil || got != want {
			t.Fatalf("note %d through the balancer: %q %v, want %q (one process for both replicas)", i+1, got, err, want)
		}
	}
	if n := gatewayEntries(t, second); n != notes {
		t.Errorf("%s lists %d entries, want %d", second.name, n, notes)
	}

	// The holder dies. The survivor takes the lock and runs a fresh
	// process: the old one's notes are gone.
	_ = syscall.Kill(-first.cmd.Process.Pid, syscall.SIGKILL)
	_ = first.cmd.Wait()
	rr.Set(urlsOf(second)...)
	took := waitNotesOn(t, second.name, second)
	t.Logf("%s runs notes %s after %s was killed", second.name, took.Round(10*time.Millisecond), first.name)
	if st := notesOn(t, second); st.PID == 0 {
		t.Errorf("notes on %s after the handover: %+v, want a process of its own", second.name, st)
	}
	if got, err := addNote(ctx, modern, "after the kill"); err != nil || got != "1 notes" {
		t.Errorf("a note after the handover: %q %v, want \"1 notes\" (a fresh process)", got, err)
	}

	// The killed replica comes back and relays to the survivor, which
	// keeps the lock.
	first = startReplica(t, bin, first.name, c.Services[first.name], env)
	waitReady(t, first)
	rr.Set(urlsOf(first, second)...)
	waitNotesOn(t, second.name, first, second)
	if st := notesOn(t, first); st.PID != 0 {
		t.Errorf("notes on %s after its restart: %+v, want relayed (no process)", first.name, st)
	}
	again, err := connect(t, lb.URL, "2025-11-25")
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	for i, want := range []string{"2 notes", "3 notes"} {
		if got, err := addNote(ctx, again, fmt.Sprintf("back %d", i)); err != nil || got != want {
			t.Errorf("note %d with both replicas back: %q %v, want %q", i, got, err, want)
		}
	}
}

// metric reads one counter of replica r's /metrics (as alice, an admin).
func metric(t *testing.T, r *replica, name string) int64 {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, r.base+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s /metrics: %v", r.name, err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\d+)$`).FindSubmatch(b)
	if m == nil {
		t.Fatalf("%s /metrics (%d) has no %s", r.name, res.StatusCode, name)
	}
	var n int64
	fmt.Sscan(string(m[1]), &n)
	return n
}

// apiCall makes one revenue call through the API at base into session
// sid and returns the entry's id.
func apiCall(ctx context.Context, base, sid string) (string, error) {
	body := `{"server":"revenue","tool":"show_revenue_dashboard","arguments":{"quarter":"Q2"}}`
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, base+"/api/v1/sessions/"+sid+"/calls", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+aliceToken)
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	var e struct {
		ID, Status string
	}
	if res.StatusCode != http.StatusOK || json.Unmarshal(b, &e) != nil || e.Status != "ok" {
		return "", fmt.Errorf("status %d: %.200s", res.StatusCode, b)
	}
	return e.ID, nil
}

// TestComposeClusterFaults: the cluster of compose.yaml under a steady
// burst of API and gateway calls through the balancer, while one replica
// is killed -9 and started again and then PostgreSQL is stopped as by a
// crash and started again. Calls fail only while their replica or the
// database is down; every acknowledged API call's entry is in the
// database; the replicas recover without a restart, and events cross
// between them again (their listen connections resynced).
func TestComposeClusterFaults(t *testing.T) {
	c := readCompose(t)
	bin := testbin.Build(t, "github.com/mcphost/mcphost/cmd/mcphost")
	pg := pgtest.Start(t) // its own: this test stops it
	dsn := pg.NewDatabase(t)
	rr := &roundrobin.Balancer{}
	lb := httptest.NewServer(rr)
	t.Cleanup(lb.Close)
	env := clusterEnv(dsn, lb.URL)
	reps := map[string]*replica{}
	setTargets := func() {
		var live []*replica
		for _, name := range replicaServices {
			if r := reps[name]; r != nil {
				live = append(live, r)
			}
		}
		rr.Set(urlsOf(live...)...)
	}
	for _, name := range replicaServices {
		reps[name] = startReplica(t, bin, name, c.Services[name], env)
		waitReady(t, reps[name])
	}
	setTargets()

	// One session for the API calls, made through the balancer.
	var sess struct {
		ID string `json:"id"`
	}
	{
		req, _ := http.NewRequest(http.MethodPost, lb.URL+"/api/v1/sessions", strings.NewReader(`{"title":"burst"}`))
		req.Header.Set("Authorization", "Bearer "+aliceToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		json.NewDecoder(res.Body).Decode(&sess)
		res.Body.Close()
		if sess.ID == "" {
			t.Fatalf("creating a session through the balancer: %d", res.StatusCode)
		}
	}

	var (
		mu        sync.Mutex
		acked     []string // entry ids of acknowledged API calls
		failures  int
		gwOK      int
		lastError string
	)
	ctx, cancel := context.WithCancel(t.Context())
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var modern *mcp.ClientSession
			for ctx.Err() == nil {
				cctx, ccancel := context.WithTimeout(ctx, 20*time.Second)
				var err error
				if w%2 == 0 {
					var id string
					if id, err = apiCall(cctx, lb.URL, sess.ID); err == nil {
						mu.Lock()
						acked = append(acked, id)
						mu.Unlock()
					}
				} else {
					if modern == nil {
						modern, err = connect(t, lb.URL, "2026-07-28")
					}
					if err == nil {
						if err = callRevenue(cctx, modern, "Q3"); err == nil {
							mu.Lock()
							gwOK++
							mu.Unlock()
						}
					}
				}
				ccancel()
				if err != nil && ctx.Err() == nil {
					mu.Lock()
					failures++
					lastError = err.Error()
					mu.Unlock()
					time.Sleep(50 * time.Millisecond)
				}
			}
			if modern != nil {
				modern.Close()
			}
		}()
	}
	progress := func(what string) (int, int) {
		deadline := time.Now().Add(waitBound)
		mu.Lock()
		a0, g0 := len(acked), gwOK
		mu.Unlock()
		for {
			time.Sleep(100 * time.Millisecond)
			mu.Lock()
			a, g := len(acked), gwOK
			mu.Unlock()
			if a >= a0+10 && g >= g0+10 {
				return a, g
			}
			if time.Now().After(deadline) {
				mu.Lock()
				defer mu.Unlock()
				t.Fatalf("%s: no progress (%d API and %d gateway calls acknowledged, %d failures, the last: %s)", what, a, g, failures, lastError)
			}
		}
	}
	progress("before the faults")

	// Replica 1 dies; the balancer's health check takes it out; it comes
	// back (a new process, the same id) and is put back.
	dead := reps[replicaServices[0]]
	_ = syscall.Kill(-dead.cmd.Process.Pid, syscall.SIGKILL)
	_ = dead.cmd.Wait()
	reps[replicaServices[0]] = nil
	setTargets()
	progress("with one replica dead")
	reps[replicaServices[0]] = startReplica(t, bin, replicaServices[0], c.Services[replicaServices[0]], env)
	waitReady(t, reps[replicaServices[0]])
	setTargets()
	progress("with the replica back")

	// PostgreSQL crashes and comes back under the burst.
	resyncs := map[string]int64{}
	for name, r := range reps {
		resyncs[name] = metric(t, r, "mcphost_cluster_resyncs_total")
	}
	pg.Down(t)
	time.Sleep(time.Second)
	pg.Up(t)
	progress("after PostgreSQL came back")
	cancel()
	wg.Wait()

	// Every acknowledged API call's entry is in the database.
	for _, r := range reps {
		have := map[string]bool{}
		for after := int64(0); ; {
			var page struct {
				Entries []struct {
					ID string `json:"id"`
				} `json:"entries"`
				Next int64 `json:"next"`
			}
			if code := getJSON(t, fmt.Sprintf("%s/api/v1/sessions/%s/entries?after=%d&limit=200", r.base, sess.ID, after), &page); code != http.StatusOK {
				t.Fatalf("%s: entries: %d", r.name, code)
			}
			for _, e := range page.Entries {
				have[e.ID] = true
			}
			if page.Next == 0 {
				break
			}
			after = page.Next
		}
		lost := 0
		for _, id := range acked {
			if !have[id] {
				lost++
			}
		}
		if lost > 0 {
			t.Errorf("%s: %d of %d acknowledged entries are not in the database", r.name, lost, len(acked))
		}
	}
	t.Logf("%d API and %d gateway calls acknowledged, %d failed while a replica or the database was down", len(acked), gwOK, failures)

	// The replicas listen to each other again: each resynced after the
	// database came back (its listener retries with a growing backoff, up
	// to seconds after the calls work again), and an entry made through
	// one reaches the other.
	for name, r := range reps {
		deadline := time.Now().Add(waitBound)
		for {
			n := metric(t, r, "mcphost_cluster_resyncs_total")
			if n > resyncs[name] {
				break
			}
			if time.Now().After(deadline) {
				t.Errorf("%s did not resync after PostgreSQL came back (resyncs %d, before %d)", name, n, resyncs[name])
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
	a, b := reps[replicaServices[0]], reps[replicaServices[1]]
	before := metric(t, b, "mcphost_cluster_pokes_received_total")
	if _, err := apiCall(t.Context(), a.base, sess.ID); err != nil {
		t.Fatalf("a call on %s after the faults: %v", a.name, err)
	}
	deadline := time.Now().Add(waitBound)
	for metric(t, b, "mcphost_cluster_pokes_received_total") <= before {
		if time.Now().After(deadline) {
			t.Fatalf("%s heard nothing of a call on %s after the faults", b.name, a.name)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
