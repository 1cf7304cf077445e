package sandbox

import "strings"

// LocalSource reports whether a source that passes [ValidSource] names this
// machine: localhost or a subdomain of it (browsers resolve *.localhost to
// loopback), or a host that ends in a number. A browser parses such a host
// as IPv4 in any spelling it accepts ("127.0.0.1", "127.1", "2130706433",
// "0x7f.0.0.1", "0177.0.0.1"); LocalSource reports true when that address is
// in 127.0.0.0/8 or is 0.0.0.0, and also when it does not parse at all or the
// source is a wildcard over a numeric suffix, since neither is a name an App
// needs. It returns false for a source that fails [ValidSource]. It is
// [HostNetwork]'s Loopback and NotAddress.
//
// The host drops local sources from an App's CSP unless the App's server is
// itself on loopback (RATIONALE.md, "App CSP: no loopback, private or
// link-local sources"): a connect-src naming loopback lets an App send
// requests to the daemon and to other local services, which refuse them
// only if they check.
func LocalSource(s string) bool {
	if ValidSource(s) != nil {
		return false
	}
	k := HostNetwork(s).Kind
	return k == Loopback || k == NotAddress
}

// endsInNumber is the WHATWG URL "ends in a number" check: the last label
// (ignoring one empty trailing label) is all decimal digits or "0x" followed
// by hex digits. Such a host is parsed as IPv4 by browsers.
func endsInNumber(host string) bool {
	labels := strings.Split(host, ".")
	last := labels[len(labels)-1]
	if last == "" && len(labels) > 1 {
		last = labels[len(labels)-2]
	}
	if last == "" {
		return false
	}
	if allDigits(last, 10) {
		return true
	}
	h, ok := strings.CutPrefix(last, "0x")
	return ok && allDigits(h, 16)
}

// parseIPv4 is the WHATWG IPv4 parser: one to four parts, each decimal,
// octal (leading 0) or hex (0x); the last part fills the remaining bytes.
func parseIPv4(host string) (uint32, bool) {
	parts := strings.Split(host, ".")
	if len(parts) > 1 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	if len(parts) == 0 || len(parts) > 4 {
		return 0, false
	}
	nums := make([]uint64, len(parts))
	for i, p := range parts {
		n, ok := parseIPv4Number(p)
		if !ok {
			return 0, false
		}
		nums[i] = n
	}
	var ip uint64
	for i, n := range nums[:len(nums)-1] {
		if n > 255 {
			return 0, false
		}
		ip |= n << (8 * (3 - i))
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return 0, false
	}
	return uint32(ip + last), true
}

// parseIPv4Number parses one part: "0x" hex, leading-zero octal, or decimal.
// Values are capped well above 2^32 so that no input overflows.
func parseIPv4Number(p string) (uint64, bool) {
	base := uint64(10)
	switch {
	case p == "":
		return 0, false
	case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
		p, base = p[2:], 16
		if p == "" {
			return 0, true // "0x" alone is zero
		}
	case len(p) > 1 && p[0] == '0':
		p, base = p[1:], 8
	}
	var n uint64
	for i := 0; i < len(p); i++ {
		d, ok := digit(p[i])
		if !ok || uint64(d) >= base {
			return 0, false
		}
		n = n*base + uint64(d)
		if n > 1<<40 {
			return 0, false
		}
	}
	return n, true
}

func allDigits(s string, base int) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		d, ok := digit(s[i])
		if !ok || d >= base {
			return false
		}
	}
	return true
}

func digit(c byte) (int, bool) {
	switch {
	case '0' <= c && c <= '9':
		return int(c - '0'), true
	case 'a' <= c && c <= 'f':
		return int(c-'a') + 10, true
	case 'A' <= c && c <= 'F':
		return int(c-'A') + 10, true
	}
	return 0, false
}
