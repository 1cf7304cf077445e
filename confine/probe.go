package confine

import (
	"fmt"
	"strings"
)

// Probe is what this machine can enforce, found once by [Detect].
type Probe struct {
	// OS is runtime.GOOS.
	OS string `json:"os"`
	// Root reports whether mcphost runs as root (servers then run as the
	// sandbox uid).
	Root bool `json:"root"`
	// LandlockABI is the kernel's Landlock ABI version, 0 without Landlock.
	LandlockABI int `json:"landlock_abi"`
	// LandlockProblem says why Landlock is missing ("" when it is there).
	LandlockProblem string `json:"landlock_problem,omitempty"`
	// Namespaces reports whether a server can get its own network and
	// mount namespace (through a user namespace when not root).
	Namespaces bool `json:"namespaces"`
	// NamespacesProblem says why not.
	NamespacesProblem string `json:"namespaces_problem,omitempty"`
	// Seccomp reports whether seccomp filters can be loaded.
	Seccomp bool `json:"seccomp"`
	// Seatbelt reports whether macOS's sandbox-exec is there.
	Seatbelt bool `json:"seatbelt,omitempty"`
}

// Lines describes the probe for `mcphost doctor`, one layer a line.
func (p Probe) Lines() []string {
	yes := func(ok bool, on, off string) string {
		if ok {
			return on
		}
		return off
	}
	if p.OS == "darwin" {
		sb := "no (/usr/bin/sandbox-exec is missing)"
		if p.Seatbelt {
			sb = "yes (sandbox-exec with a generated profile)"
		}
		return []string{
			"env: yes (every server gets only the allowlisted environment)",
			"fs, unix, signals: " + sb,
			"net: " + sb + " for network = \"none\" and \"host\"; network = \"proxy\" is not available on macOS yet",
			"uid: same uid as mcphost",
			"limits: no (servers with a limits block need on_unsupported = \"warn\")",
		}
	}
	if p.OS != "linux" {
		return []string{
			"env: yes (every server gets only the allowlisted environment)",
			fmt.Sprintf("fs, net, unix, uid, signals: no (%s has no sandbox in mcphost yet: servers need sandbox { mode = \"off\" } or on_unsupported = \"warn\")", p.OS),
		}
	}
	ll := fmt.Sprintf("yes (Landlock ABI %d)", p.LandlockABI)
	if p.LandlockABI == 0 {
		ll = "no (" + p.LandlockProblem + ")"
	}
	lines := []string{
		"env: yes (every server gets only the allowlisted environment)",
		"fs: " + ll,
		"net: " + yes(p.Namespaces, "yes (a network namespace per server; egress through mcphost's proxy)", "no ("+p.NamespacesProblem+")"),
		"unix: " + yes(p.Seccomp, "yes (seccomp refuses unix sockets and io_uring)", "no (seccomp filters unavailable)"),
		"signals: " + yes(p.LandlockABI >= 6, "yes (Landlock scopes)", "no (needs Landlock ABI 6, Linux 6.12)"),
		"uid: " + yes(p.Root, "yes (mcphost runs as root: servers run as the sandbox uid)", "same uid as mcphost (it is not root)"),
		"privileges: yes (no_new_privs)",
		"limits: yes (rlimits)",
	}
	return lines
}

// Ready reports whether every default layer can be enforced here.
func (p Probe) Ready() bool {
	if p.OS == "darwin" {
		return p.Seatbelt
	}
	return p.OS == "linux" && p.LandlockABI >= 1 && p.Namespaces && p.Seccomp
}

// String is the probe on one line, for logs.
func (p Probe) String() string {
	if p.OS != "linux" {
		return p.OS + ": environment allowlist only"
	}
	parts := []string{fmt.Sprintf("landlock=%d", p.LandlockABI), fmt.Sprintf("namespaces=%t", p.Namespaces), fmt.Sprintf("seccomp=%t", p.Seccomp), fmt.Sprintf("root=%t", p.Root)}
	return strings.Join(parts, " ")
}
