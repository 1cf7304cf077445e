package confine

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// seatbeltSystem are the directories a server on macOS may read and
// execute: the system's programs, libraries and configuration, and the
// usual package managers' prefixes.
var seatbeltSystem = []string{"/usr", "/bin", "/sbin", "/System", "/Library", "/private/etc", "/private/var/db/timezone", "/opt/homebrew", "/usr/local"}

// SeatbeltProfile is the sandbox-exec profile of a server on macOS: deny
// by default; read and execute the system, the command's prefix and the
// read grants; read and write its own directory and the write grants;
// stat anything (path resolution needs it); no network but, with a proxy
// port, TCP to that port on loopback; signals only within the sandbox.
// Paths must be absolute; they are quoted for the profile language.
func SeatbeltProfile(spec Spec, home, tmp, prefix string, proxyPort int) string {
	var b strings.Builder
	b.WriteString("(version 1)\n(deny default)\n")
	b.WriteString("(allow process-fork)\n(allow process-exec)\n(allow signal (target same-sandbox))\n")
	b.WriteString("(allow sysctl-read)\n(allow file-read-metadata)\n")
	b.WriteString("(allow mach-lookup (global-name \"com.apple.system.logger\") (global-name \"com.apple.system.notification_center\"))\n")
	reads := slices.Concat(seatbeltSystem, spec.Read)
	if prefix != "" {
		reads = append(reads, prefix)
	}
	b.WriteString("(allow file-read*")
	for _, p := range reads {
		fmt.Fprintf(&b, "\n  (subpath %s)", seatbeltString(p))
	}
	b.WriteString("\n  (literal \"/dev/urandom\") (literal \"/dev/random\"))\n")
	// The last rule that matches wins: mcphost's state is denied after the
	// read grants (a config under /etc stays hidden) and before the
	// server's own directory, which lies inside data_dir, is allowed.
	for _, p := range spec.Protected {
		fmt.Fprintf(&b, "(deny file-read* file-write* (subpath %s))\n", seatbeltString(p))
	}
	b.WriteString("(allow file-read* file-write*")
	for _, p := range slices.Concat([]string{spec.Dir, home, tmp}, spec.Write) {
		fmt.Fprintf(&b, "\n  (subpath %s)", seatbeltString(p))
	}
	b.WriteString("\n  (literal \"/dev/null\") (literal \"/dev/zero\"))\n")
	switch {
	case spec.Network == NetHost:
		b.WriteString("(allow network*)\n")
	case proxyPort > 0:
		fmt.Fprintf(&b, "(allow network-outbound (remote tcp \"localhost:%d\"))\n", proxyPort)
	}
	return b.String()
}

// seatbeltString quotes s as a string of the profile language.
func seatbeltString(s string) string { return strconv.Quote(s) }
