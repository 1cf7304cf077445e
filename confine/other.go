//go:build !linux && !darwin

package confine

import (
	"net"
	"os/exec"
	"runtime"
)

// HelperPath is unused off Linux.
var HelperPath string

// MaybeHelper does nothing off Linux: there is no helper.
func MaybeHelper() {}

// Detect reports that only the environment allowlist exists here.
func Detect() Probe { return Probe{OS: runtime.GOOS} }

// Plan is a server's sandbox; off Linux it has no layer but env.
type Plan struct {
	spec   Spec
	layers []Layer
}

// Prepare refuses every server that does not say Off or Warn: this system
// has no sandbox in mcphost.
func Prepare(spec Spec, probe Probe) (*Plan, error) {
	p := &Plan{spec: spec, layers: []Layer{{Name: "env", Active: true, Detail: "allowlisted variables only"}}}
	if spec.Off {
		p.layers = append(p.layers, Layer{Name: "fs", Detail: "sandbox mode is off"})
		return p, nil
	}
	missing := []Layer{{Name: "fs", Detail: "no sandbox on " + probe.OS}, {Name: "net", Detail: "no sandbox on " + probe.OS}}
	p.layers = append(p.layers, missing...)
	if !spec.Warn {
		return nil, &UnsupportedError{Server: spec.Server, Missing: missing}
	}
	return p, nil
}

// Layers returns the plan's layers.
func (p *Plan) Layers() []Layer { return append([]Layer(nil), p.layers...) }

// Command returns base unchanged: only its environment is contained.
func (p *Plan) Command(base *exec.Cmd, serve func(net.Listener)) (*exec.Cmd, error) {
	return base, nil
}
