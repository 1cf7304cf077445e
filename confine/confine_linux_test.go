package confine_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/confine"
	"github.com/mcphost/mcphost/internal/testbin"
)

func TestMain(m *testing.M) {
	confine.MaybeHelper()
	code := m.Run()
	testbin.Cleanup()
	os.Exit(code)
}

// requireLayers fails (in CI) or skips the test when this machine cannot
// enforce the sandbox's default layers.
func requireLayers(t *testing.T) confine.Probe {
	t.Helper()
	p := confine.Detect()
	if !p.Ready() {
		if os.Getenv("CI") != "" || os.Getenv("MCPHOST_REQUIRE_SANDBOX") != "" {
			t.Fatalf("this machine cannot enforce the sandbox (%s); CI must", strings.Join(p.Lines(), "; "))
		}
		t.Skipf("no sandbox here: %s", p)
	}
	return p
}

type attempt struct {
	Reached bool   `json:"reached"`
	Detail  string `json:"detail"`
}

type report struct {
	Attempts map[string]attempt `json:"attempts"`
	UID      int                `json:"uid"`
}

// TestHostileServer runs the hostile fixture contained, with no grants,
// and checks that nothing of mcphost's or the machine's that it tries is
// within its reach.
func TestHostileServer(t *testing.T) {
	probe := requireLayers(t)
	bin := os.Getenv(hostileBinEnv) // set when TestHostileServerAsNonRoot runs this test as testUID
	if bin == "" {
		bin = testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/hostile")
	}

	data := t.TempDir()
	token := filepath.Join(data, "owner.token")
	store := filepath.Join(data, "mcphost.db")
	otherHome := filepath.Join(data, "sandboxes", "other", "home")
	must(t, os.MkdirAll(otherHome, 0o700))
	for _, f := range []string{token, store, filepath.Join(otherHome, "notes")} {
		must(t, os.WriteFile(f, []byte("secret"), 0o600))
	}
	conf := t.TempDir()
	config := filepath.Join(conf, "mcphost.hcl")
	secret := filepath.Join(conf, "api.key")
	must(t, os.WriteFile(config, []byte("server {}"), 0o644))
	must(t, os.WriteFile(secret, []byte("sk-secret"), 0o644))
	home := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(home, "repo", ".git", "hooks"), 0o755))

	api, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer api.Close()
	sock := filepath.Join(data, "api.sock")
	unixLn, err := net.Listen("unix", sock)
	must(t, err)
	defer unixLn.Close()
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	must(t, err)
	defer udp.Close()

	targets := map[string]any{
		"read": []string{token, store, config, secret, filepath.Join(otherHome, "notes"), "/etc/shadow",
			fmt.Sprintf("/proc/%d/environ", os.Getpid())},
		"write":     []string{filepath.Join(home, ".bashrc"), filepath.Join(home, "repo", ".git", "hooks", "pre-commit"), filepath.Join(data, "evil")},
		"tcp":       []string{api.Addr().String()},
		"unix":      []string{sock},
		"udp":       []string{udp.LocalAddr().String()},
		"signal":    os.Getpid(),
		"fork":      confine.DefaultPids + 100,
		"envPrefix": []string{"MCPHOST_", "UNLISTED_SECRET"},
	}
	tj, _ := json.Marshal(targets)
	limits := confine.Limits{}
	if !probe.Root {
		// The sandbox uid is mcphost's own: no default process bound (it
		// would count every process of the user), so the test sets one.
		limits.Pids = confine.DefaultPids
	}
	spec := confine.Spec{
		Limits:    limits,
		Server:    "hostile",
		Network:   confine.NetNone,
		Protected: []string{data, config, secret},
		Dir:       filepath.Join(data, "sandboxes", "hostile"),
		UID:       testUID,
	}
	plan, err := confine.Prepare(spec, probe)
	must(t, err)
	t.Logf("layers: %v", plan.Layers())
	base := exec.Command(bin, "-once", string(tj))
	base.Env = []string{"PATH=/usr/bin:/bin", "LANG=C"}
	t.Setenv("MCPHOST_SECRET_KEY", "k")
	t.Setenv("UNLISTED_SECRET", "v")
	cmd, err := plan.Command(base, nil)
	must(t, err)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("hostile server: %v\nstderr: %s", err, stderr.String())
	}
	var r report
	if err := json.Unmarshal(out, &r); err != nil {
		t.Fatalf("report %q: %v", out, err)
	}
	for name, a := range r.Attempts {
		if a.Reached && !strings.HasPrefix(name, "udp ") {
			t.Errorf("the sandboxed server reached %s: %s", name, a.Detail)
		} else {
			t.Logf("refused: %s: %s", name, a.Detail)
		}
	}
	if len(r.Attempts) < 14 {
		t.Errorf("only %d attempts reported: %v", len(r.Attempts), r.Attempts)
	}
	_ = udp.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	if n, from, err := udp.ReadFrom(make([]byte, 64)); err == nil {
		t.Errorf("the sandboxed server's datagram arrived (%d bytes from %v)", n, from)
	}
	if probe.Root && r.UID != testUID {
		t.Errorf("server ran as uid %d, want %d", r.UID, testUID)
	}
	if _, err := os.Stat(filepath.Join(home, ".bashrc")); err == nil {
		t.Error(".bashrc was written")
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// hostileBinEnv passes the hostile fixture to TestHostileServer run as
// another uid, which cannot build it.
const hostileBinEnv = "CONFINE_TEST_HOSTILE_BIN"

// testUID is the uid these tests contain their servers as (and run the
// non-root pass as), rather than 65534, mcphost's default sandbox uid.
// Linux bounds processes per uid (RLIMIT_NPROC): TestHostileServer's fork
// bomb fills its uid's bound on purpose, and other packages' tests, running
// at the same time, start their contained servers as 65534; sharing the
// uid made their starts fail with EAGAIN.
const testUID = 64001

// TestHostileServerAsNonRoot runs TestHostileServer again as testUID,
// the way an operator runs mcphost as themselves: the sandbox then goes
// through a user namespace, and every attempt must fail the same.
func TestHostileServerAsNonRoot(t *testing.T) {
	requireLayers(t)
	if os.Geteuid() != 0 {
		t.Skip("runs as root, to start the test again as another uid (this run is already not root)")
	}
	if os.Getenv(hostileBinEnv) != "" {
		t.Skip("already the non-root run")
	}
	dir, err := os.MkdirTemp("", "confine-nonroot-")
	must(t, err)
	defer os.RemoveAll(dir)
	must(t, os.Chmod(dir, 0o777))
	self, err := os.Executable()
	must(t, err)
	testBin, fixture := filepath.Join(dir, "confine.test"), filepath.Join(dir, "hostile")
	must(t, copyFile(self, testBin))
	must(t, copyFile(testbin.Build(t, "github.com/mcphost/mcphost/testdata/servers/hostile"), fixture))
	tmp := filepath.Join(dir, "tmp")
	must(t, os.Mkdir(tmp, 0o777))
	must(t, os.Chmod(tmp, 0o777)) // past the umask

	cmd := exec.Command(testBin, "-test.run", "^TestHostileServer$", "-test.v")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "TMPDIR=" + tmp, "HOME=" + tmp, hostileBinEnv + "=" + fixture}
	if os.Getenv("CI") != "" {
		cmd.Env = append(cmd.Env, "CI="+os.Getenv("CI"))
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: testUID, Gid: testUID}}
	out, err := cmd.CombinedOutput()
	t.Logf("as uid %d:\n%s", testUID, out)
	if err != nil {
		t.Fatalf("TestHostileServer as uid %d: %v", testUID, err)
	}
	if !strings.Contains(string(out), "--- PASS: TestHostileServer") {
		t.Fatalf("TestHostileServer did not pass as uid %d (skipped?)", testUID)
	}
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o755)
}

// TestLimits: a server's limits block reaches its process as rlimits.
func TestLimits(t *testing.T) {
	probe := requireLayers(t)
	spec := confine.Spec{Server: "limited", Network: confine.NetNone, Dir: filepath.Join(t.TempDir(), "limited"), UID: testUID,
		Limits: confine.Limits{OpenFiles: 77, Memory: 3 << 30, Pids: 99, CPU: 3600}}
	plan, err := confine.Prepare(spec, probe)
	must(t, err)
	base := exec.Command("/bin/sh", "-c", "ulimit -n; ulimit -v; ulimit -p; ulimit -t; ulimit -c")
	base.Env = []string{"PATH=/usr/bin:/bin"}
	cmd, err := plan.Command(base, nil)
	must(t, err)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got, want := strings.Fields(string(out)), []string{"77", fmt.Sprint((3 << 30) / 1024), "99", "3600", "0"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("ulimit -n -v -p -t -c = %v, want %v", got, want)
	}
}

// TestControlDirRemoved checks that the directory of the helpers' control
// sockets is there while a start is on its way and gone once the helper
// has connected, so that nothing is left in the temporary directory.
func TestControlDirRemoved(t *testing.T) {
	probe := requireLayers(t)
	spec := confine.Spec{Server: "ctl", Network: confine.NetNone, Dir: filepath.Join(t.TempDir(), "ctl"), UID: testUID}
	plan, err := confine.Prepare(spec, probe)
	must(t, err)
	base := exec.Command("/bin/true")
	base.Env = []string{"PATH=/usr/bin:/bin"}
	cmd, err := plan.Command(base, nil)
	must(t, err)
	dir, users := confine.ControlDir()
	if dir == "" || users != 1 {
		t.Fatalf("before the start: control directory %q with %d sockets, want one", dir, users)
	}
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("control directory: %v", err)
	}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got, users := confine.ControlDir(); got != "" || users != 0 {
		t.Errorf("after the start: control directory %q with %d sockets, want none", got, users)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the control directory %s is still there: %v", dir, err)
	}
}
