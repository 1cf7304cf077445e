//go:build darwin

package confine

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
)

// HelperPath is unused on macOS: sandbox-exec is the helper.
var HelperPath string

// sandboxExec is macOS's Seatbelt front end.
const sandboxExec = "/usr/bin/sandbox-exec"

// MaybeHelper does nothing on macOS.
func MaybeHelper() {}

// Detect reports whether sandbox-exec is there.
func Detect() Probe {
	_, err := os.Stat(sandboxExec)
	return Probe{OS: "darwin", Root: os.Geteuid() == 0, Seatbelt: err == nil}
}

// Plan is a server's sandbox on macOS: a Seatbelt profile.
type Plan struct {
	spec   Spec
	layers []Layer
	on     bool
}

// Prepare decides the layers: Seatbelt confines files, sockets, signals
// and the network (none or host); the egress proxy and rlimits are not
// available here, and a spec that needs them is refused unless Warn.
func Prepare(spec Spec, probe Probe) (*Plan, error) {
	p := &Plan{spec: spec, layers: []Layer{{Name: "env", Active: true, Detail: "allowlisted variables only"}}}
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
	p.on = probe.Seatbelt
	layer("fs", p.on, "seatbelt: system read-only, own home and tmp, grants", "no "+sandboxExec)
	switch spec.Network {
	case NetHost:
		p.layers = append(p.layers, Layer{Name: "net", Detail: "network = \"host\": the machine's network, unrestricted"})
	case NetProxy:
		layer("net", false, "", "the egress proxy is not available on macOS yet")
	default:
		layer("net", p.on, "seatbelt: no network", "no "+sandboxExec)
	}
	layer("unix", p.on, "seatbelt: no sockets", "no "+sandboxExec)
	layer("signals", p.on, "seatbelt: signals within the sandbox only", "no "+sandboxExec)
	if spec.Limits != (Limits{}) {
		layer("limits", false, "", "rlimits are not applied on macOS yet")
	}
	if len(missing) > 0 && !spec.Warn {
		return nil, &UnsupportedError{Server: spec.Server, Missing: missing}
	}
	return p, nil
}

// Layers returns the plan's layers.
func (p *Plan) Layers() []Layer { return slices.Clone(p.layers) }

// Command runs base under sandbox-exec with the server's profile.
func (p *Plan) Command(base *exec.Cmd, serve func(net.Listener)) (*exec.Cmd, error) {
	if p.spec.Off || !p.on {
		return base, nil
	}
	if base.Err != nil {
		return nil, base.Err
	}
	exe, err := filepath.EvalSymlinks(base.Path)
	if err != nil {
		return nil, &os.PathError{Op: "fork/exec", Path: base.Path, Err: err}
	}
	home, tmp, err := ownDirs(p.spec, false)
	if err != nil {
		return nil, err
	}
	prefix := filepath.Dir(filepath.Dir(exe))
	if h, _ := os.UserHomeDir(); prefix == "/" || prefix == h {
		prefix = filepath.Dir(exe)
	}
	profile := SeatbeltProfile(p.spec, home, tmp, prefix, 0)
	cmd := exec.Command(sandboxExec, append([]string{"-p", profile, "--", exe}, base.Args[1:]...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = base.Stdin, base.Stdout, base.Stderr
	cmd.Dir, cmd.WaitDelay = base.Dir, base.WaitDelay
	cmd.Env = serverEnv(p.spec.Runtime, base.Env, home, tmp, "")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	return cmd, nil
}
