package confine

import (
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"

	"github.com/landlock-lsm/go-landlock/landlock"
)

// HelperPath, when set, is the binary run as the sandbox helper instead of
// the running one (which must call [MaybeHelper] first thing in main).
var HelperPath string

// systemRead are the directories every sandboxed server may read and
// execute: the system's programs, libraries and configuration. Missing
// ones are skipped.
var systemRead = []string{"/usr", "/lib", "/lib32", "/lib64", "/libx32", "/bin", "/sbin", "/etc"}

// devFiles are the device files a server gets, read-write or read-only.
var (
	devRW = []string{"/dev/null", "/dev/zero", "/dev/full"}
	devRO = []string{"/dev/urandom", "/dev/random"}
)

// runDir is where a server running as the sandbox uid finds its own
// directory: a fresh tmpfs over /run in its mount namespace, holding a bind
// of Spec.Dir, so that no directory of mcphost's (the data directory is
// 0700) stands in its way.
const (
	runDir   = "/run/mcphost"
	runExe   = "/run/mcphost-exe"
	probeArg = "__sandbox-probe"
	execArg  = "__sandbox-exec"
)

// Plan is a server's sandbox, prepared for a start: the layers it will
// have and what the helper must do.
type Plan struct {
	spec   Spec
	probe  Probe
	layers []Layer

	landlock bool // apply a Landlock ruleset
	netns    bool // own network namespace
	seccomp  bool
	setuid   bool // mcphost is root: run as spec.UID
	masks    []string
}

// Prepare decides the layers of spec's sandbox on a machine that can do
// what probe says. With spec.Off it returns a plan that only reports the
// server as unsandboxed. When a layer is missing and !spec.Warn, it
// returns an *UnsupportedError.
func Prepare(spec Spec, probe Probe) (*Plan, error) {
	p := &Plan{spec: spec, probe: probe}
	p.layers = append(p.layers, Layer{Name: "env", Active: true, Detail: "allowlisted variables only"})
	if spec.Off {
		p.layers = append(p.layers, Layer{Name: "fs", Detail: "sandbox mode is off"})
		return p, nil
	}
	var missing []Layer
	layer := func(name string, ok bool, on, off string) {
		l := Layer{Name: name, Active: ok, Detail: on}
		if !ok {
			l.Detail = off
			missing = append(missing, l)
		}
		p.layers = append(p.layers, l)
	}
	p.landlock = probe.LandlockABI >= 1
	layer("fs", p.landlock, fmt.Sprintf("landlock v%d: system read-only, own home and tmp, %d grants", probe.LandlockABI, len(spec.Read)+len(spec.Write)), "no Landlock: "+probe.LandlockProblem)
	switch spec.Network {
	case NetHost:
		p.layers = append(p.layers, Layer{Name: "net", Active: false, Detail: "network = \"host\": the machine's network, unrestricted"})
	default:
		p.netns = probe.Namespaces
		what := "own network namespace, no network"
		if spec.Network == NetProxy {
			what = "own network namespace, egress only through mcphost's proxy to allow_hosts"
		}
		layer("net", p.netns, what, "no network namespace: "+probe.NamespacesProblem)
	}
	p.seccomp = probe.Seccomp
	layer("unix", p.seccomp, "seccomp refuses unix sockets and io_uring", "no seccomp")
	p.setuid = probe.Root
	if probe.Root {
		p.layers = append(p.layers, Layer{Name: "uid", Active: true, Detail: fmt.Sprintf("runs as uid %d, not root", spec.UID)})
	} else {
		p.layers = append(p.layers, Layer{Name: "uid", Active: true, Detail: fmt.Sprintf("runs as mcphost's uid %d (mcphost is not root)", os.Getuid())})
	}
	// Scopes are best effort, as Landlock's rights are: a kernel before
	// 6.12 (ABI 6) cannot scope signals, and refusing every server there
	// would leave most machines with none; the layer says what holds.
	switch {
	case p.landlock && probe.LandlockABI >= 6:
		p.layers = append(p.layers, Layer{Name: "signals", Active: true, Detail: "landlock scopes: no signals or abstract sockets outside the sandbox"})
	case probe.Root:
		p.layers = append(p.layers, Layer{Name: "signals", Active: true, Detail: fmt.Sprintf("another uid than mcphost's (Landlock ABI %d cannot scope signals)", probe.LandlockABI)})
	default:
		p.layers = append(p.layers, Layer{Name: "signals", Detail: fmt.Sprintf("not scoped: Landlock ABI %d < 6 (Linux 6.12); the server could signal processes of mcphost's uid", probe.LandlockABI)})
	}
	p.layers = append(p.layers, Layer{Name: "privileges", Active: true, Detail: "no_new_privs, no capabilities"})
	p.layers = append(p.layers, Layer{Name: "limits", Active: true, Detail: p.limitsDetail()})
	p.masks = p.maskedPaths()
	if len(p.masks) > 0 {
		ok := probe.Root || probe.Namespaces
		layer("masks", ok, fmt.Sprintf("%d protected paths hidden inside grants", len(p.masks)), "cannot hide protected paths inside grants without a mount namespace")
	}
	if len(missing) > 0 && !spec.Warn {
		return nil, &UnsupportedError{Server: spec.Server, Missing: missing}
	}
	return p, nil
}

// Layers returns the plan's layers, in a fixed order.
func (p *Plan) Layers() []Layer { return slices.Clone(p.layers) }

func (p *Plan) limitsDetail() string {
	l := p.effectiveLimits()
	parts := []string{"core 0"}
	if l.OpenFiles > 0 {
		parts = append(parts, fmt.Sprintf("open files %d", l.OpenFiles))
	}
	if l.Memory > 0 {
		parts = append(parts, fmt.Sprintf("memory %d MiB", l.Memory>>20))
	}
	if l.Pids > 0 {
		parts = append(parts, fmt.Sprintf("processes %d", l.Pids))
	}
	if l.CPU > 0 {
		parts = append(parts, fmt.Sprintf("cpu %ds", l.CPU))
	}
	return strings.Join(parts, ", ")
}

// effectiveLimits are the spec's limits with the default process bound
// for a server that runs as the sandbox uid.
func (p *Plan) effectiveLimits() Limits {
	l := p.spec.Limits
	if l.Pids == 0 && p.probe.Root {
		l.Pids = DefaultPids
	}
	return l
}

// maskedPaths are the protected paths that lie inside a directory the
// server may read: those the helper hides with a mount.
func (p *Plan) maskedPaths() []string {
	var out []string
	trees := slices.Concat(systemRead, p.spec.Read, p.spec.Write)
	for _, prot := range p.spec.Protected {
		for _, t := range trees {
			if within(prot, t) && prot != t {
				if _, err := os.Stat(prot); err == nil {
					out = append(out, prot)
				}
				break
			}
		}
	}
	return out
}

// within reports whether path is dir or lies inside it.
func within(path, dir string) bool {
	if dir == "/" {
		return true
	}
	return path == dir || strings.HasPrefix(path, dir+"/")
}

// helperSpec is what the helper is told on its command line.
type helperSpec struct {
	Exe      string   `json:"exe"`       // the server's program, the path exec'd
	Argv     []string `json:"argv"`      // its argv
	Landlock bool     `json:"landlock"`  // a Landlock ruleset comes over the control socket
	Flags    uint32   `json:"flags"`     // landlock_restrict_self flags
	NetNS    bool     `json:"netns"`     // bring lo up
	Proxy    bool     `json:"proxy"`     // listen on ProxyAddr and send the listener back
	Seccomp  bool     `json:"seccomp"`   // load the filter
	UID      int      `json:"uid"`       // setuid/setgid to this when > 0
	RunBind  string   `json:"run_bind"`  // bind this over runDir on a fresh /run
	ExeBind  bool     `json:"exe_bind"`  // bind Exe over runExe and exec that
	Masks    []string `json:"masks"`     // protected paths to hide
	Limits   Limits   `json:"limits"`    // rlimits
	Control  string   `json:"control"`   // the parent's control socket: the ruleset comes in, the hello goes out
	ClearCap bool     `json:"clear_cap"` // drop ambient capabilities (user namespace)
}

// Command turns base, the server's plain command (Path, Args, Env, Dir
// set), into the command that starts it contained. serve is called with
// the listener of the server's egress proxy when its network is "proxy".
// The returned command must be started at most once; whatever the plan
// opened for it is closed when the server exits, or soon after when it is
// never started.
func (p *Plan) Command(base *exec.Cmd, serve func(net.Listener)) (*exec.Cmd, error) {
	if p.spec.Off {
		return base, nil
	}
	if base.Err != nil {
		return nil, base.Err
	}
	exe, err := filepath.EvalSymlinks(base.Path)
	if err != nil {
		// What starting the missing command unsandboxed would say.
		var pe *os.PathError
		if errors.As(err, &pe) {
			err = pe.Err
		}
		return nil, &os.PathError{Op: "fork/exec", Path: base.Path, Err: err}
	}
	home, tmp, err := ownDirs(p.spec, p.setuid)
	if err != nil {
		return nil, err
	}
	hs := helperSpec{Exe: exe, Argv: base.Args, NetNS: p.netns, Proxy: p.netns && p.spec.Network == NetProxy,
		Seccomp: p.seccomp, Masks: p.masks, Limits: p.effectiveLimits(), ClearCap: !p.probe.Root && p.netns}
	envHome, envTmp := home, tmp
	if p.setuid {
		hs.UID = p.spec.UID
		hs.RunBind = p.spec.Dir
		envHome, envTmp = runDir+"/home", runDir+"/tmp"
		if !reachable(exe, p.spec.UID) {
			hs.ExeBind = true
		}
	}
	helper, err := helperPath()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(helper)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = base.Stdin, base.Stdout, base.Stderr
	cmd.Dir = base.Dir
	cmd.WaitDelay = base.WaitDelay
	proxy := ""
	if hs.Proxy {
		proxy = ProxyAddr
	}
	cmd.Env = serverEnv(p.spec.Runtime, base.Env, envHome, envTmp, proxy)
	if p.netns || p.setuid || len(p.masks) > 0 {
		cmd.SysProcAttr = nsAttr(p.probe.Root, p.netns)
	} else {
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	}
	if !p.netns && !p.probe.Root {
		cmd.SysProcAttr.AmbientCaps = nil
	}

	var ruleset *os.File
	if p.landlock {
		fd, flags, err := p.ruleset(exe, home, tmp, hs.Proxy)
		if err != nil {
			return nil, err
		}
		hs.Landlock, hs.Flags = fd >= 0, flags
		if fd >= 0 {
			ruleset = os.NewFile(uintptr(fd), "landlock-ruleset")
		}
	}
	ctl, err := listenControl()
	if err != nil {
		if ruleset != nil {
			ruleset.Close()
		}
		return nil, err
	}
	hs.Control = ctl.Addr().String()
	spec, err := json.Marshal(hs)
	if err != nil {
		ctl.Close()
		return nil, err
	}
	cmd.Args = append([]string{filepath.Base(base.Path), execArg, string(spec), "--"}, base.Args...)
	go watch(ctl, ruleset, serve, p.spec.Server)
	return cmd, nil
}

// ruleset builds the Landlock ruleset: the system read-only, the command's
// install prefix read-only, the server's own directory and write grants
// read-write, and for the proxy the one TCP port it may connect to.
func (p *Plan) ruleset(exe, home, tmp string, proxy bool) (int, uint32, error) {
	cfg := landlock.V11.BestEffort()
	if p.spec.Network == NetHost {
		cfg.HandledAccessNet = 0
	}
	rules := []landlock.Rule{
		landlock.RODirs(systemRead...).IgnoreIfMissing(),
		landlock.RWFiles(devRW...).IgnoreIfMissing(),
		landlock.ROFiles(devRO...).IgnoreIfMissing(),
		landlock.RWDirs(p.spec.Dir).WithRefer(),
		landlock.ROFiles(exe),
	}
	if prefix := p.installPrefix(exe); prefix != "" {
		rules = append(rules, landlock.RODirs(prefix))
	}
	for _, r := range p.spec.Read {
		rules = append(rules, pathRule(r, false))
	}
	for _, w := range p.spec.Write {
		rules = append(rules, pathRule(w, true))
	}
	if proxy {
		_, port, _ := net.SplitHostPort(ProxyAddr)
		var n uint16
		fmt.Sscan(port, &n)
		rules = append(rules, landlock.ConnectTCP(n))
	}
	fd, flags, err := cfg.NewRulesetFD(rules...)
	if err != nil {
		return -1, 0, fmt.Errorf("sandbox: building the Landlock ruleset of server %q: %w", p.spec.Server, err)
	}
	return fd, flags, nil
}

// pathRule grants a file or a directory.
func pathRule(path string, write bool) landlock.Rule {
	fi, err := os.Stat(path)
	dir := err != nil || fi.IsDir()
	switch {
	case dir && write:
		return landlock.RWDirs(path).WithRefer().IgnoreIfMissing()
	case dir:
		return landlock.RODirs(path).IgnoreIfMissing()
	case write:
		return landlock.RWFiles(path).IgnoreIfMissing()
	default:
		return landlock.ROFiles(path).IgnoreIfMissing()
	}
}

// installPrefix is the directory a command comes with, granted read-only:
// /opt/node for /opt/node/bin/node. It is narrowed to the command's own
// directory, or to nothing, when it would be / or the home directory, or
// would contain a protected path. System directories are granted anyway.
func (p *Plan) installPrefix(exe string) string {
	home, _ := os.UserHomeDir()
	for _, cand := range []string{filepath.Dir(filepath.Dir(exe)), filepath.Dir(exe)} {
		if cand == "/" || cand == home || cand == "." {
			continue
		}
		bad := false
		for _, prot := range p.spec.Protected {
			if within(prot, cand) || within(cand, prot) {
				bad = true
				break
			}
		}
		for _, other := range []string{p.spec.Dir, filepath.Dir(p.spec.Dir)} {
			if other != "" && within(other, cand) {
				bad = true
			}
		}
		if !bad {
			return cand
		}
	}
	return ""
}

// reachable reports whether uid can reach path through its directories
// by their modes (the uid is neither owner nor, we assume, in the group).
func reachable(path string, uid int) bool {
	for d := filepath.Dir(path); ; d = filepath.Dir(d) {
		fi, err := os.Stat(d)
		if err != nil {
			return false
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		mode := fi.Mode().Perm()
		owner := st != nil && int(st.Uid) == uid
		if !(owner && mode&0o100 != 0) && mode&0o001 == 0 {
			return false
		}
		if d == "/" {
			break
		}
	}
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().Perm()&0o005 == 0o005
}
