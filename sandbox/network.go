package sandbox

import (
	"net/netip"
	"strings"
)

// NetworkKind says what kind of network a host is on, as far as its
// address tells: the host drops an App's CSP sources on loopback, private
// and link-local networks unless the App's server is on the same one
// (RATIONALE.md, "App CSP: no loopback, private or link-local sources").
type NetworkKind int

const (
	// Public is a public address or a DNS name. Names are not resolved:
	// one that resolves to a private address is left to the browser's
	// private-network protections.
	Public NetworkKind = iota
	// Loopback is this machine: localhost, *.localhost, 127.0.0.0/8, ::1
	// and the unspecified addresses 0.0.0.0 and ::.
	Loopback
	// Private is a network that is not routed on the internet: RFC 1918
	// (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16), shared address space
	// for carrier-grade NAT (100.64.0.0/10, RFC 6598) and unique local
	// IPv6 (fc00::/7, RFC 4193).
	Private
	// LinkLocal is 169.254.0.0/16 and fe80::/10.
	LinkLocal
	// Metadata is a cloud instance metadata address (169.254.169.254,
	// fd00:ec2::254, 100.100.100.200): credentials of the machine the
	// browser runs on, if it runs in a cloud. No App has a reason to reach
	// one, whatever network its server is on.
	Metadata
	// NotAddress is a host that ends in a number but is not an IPv4 address
	// a browser accepts ("999.1.1.1", "a.b.1"), or a wildcard over a
	// numeric suffix ("*.0.0.1"): nothing a browser can reach by that name.
	NotAddress
)

// Network is where a host is: its kind and, for an IP address outside
// the public internet, the registered block it is in.
type Network struct {
	Kind NetworkKind
	// Block is the address block, such as 10.0.0.0/8 or fe80::/10; the
	// zero prefix for Public and NotAddress and for the localhost names.
	Block netip.Prefix
}

// String names the network for a message: "private network 10.0.0.0/8",
// "loopback (this machine)".
func (n Network) String() string {
	for _, b := range blocks {
		if b.prefix == n.Block && b.kind == n.Kind {
			return b.name
		}
	}
	switch n.Kind {
	case Loopback:
		return "loopback (this machine)"
	case NotAddress:
		return "a numeric host that is not an IPv4 address"
	}
	return "a public address or a DNS name"
}

// blocks are the address blocks [HostNetwork] knows, the narrower first.
// An IPv4 address mapped into IPv6 (::ffff:10.0.0.1) is looked up as IPv4.
var blocks = []struct {
	prefix netip.Prefix
	kind   NetworkKind
	name   string
}{
	{netip.MustParsePrefix("169.254.169.254/32"), Metadata, "cloud metadata address 169.254.169.254"},
	{netip.MustParsePrefix("fd00:ec2::254/128"), Metadata, "cloud metadata address fd00:ec2::254"},
	{netip.MustParsePrefix("100.100.100.200/32"), Metadata, "cloud metadata address 100.100.100.200"},
	{netip.MustParsePrefix("127.0.0.0/8"), Loopback, "loopback 127.0.0.0/8 (this machine)"},
	{netip.MustParsePrefix("0.0.0.0/32"), Loopback, "unspecified address 0.0.0.0 (this machine)"},
	{netip.MustParsePrefix("::1/128"), Loopback, "loopback ::1 (this machine)"},
	{netip.MustParsePrefix("::/128"), Loopback, "unspecified address :: (this machine)"},
	{netip.MustParsePrefix("10.0.0.0/8"), Private, "private network 10.0.0.0/8"},
	{netip.MustParsePrefix("172.16.0.0/12"), Private, "private network 172.16.0.0/12"},
	{netip.MustParsePrefix("192.168.0.0/16"), Private, "private network 192.168.0.0/16"},
	{netip.MustParsePrefix("100.64.0.0/10"), Private, "carrier-grade NAT network 100.64.0.0/10"},
	{netip.MustParsePrefix("fc00::/7"), Private, "unique local network fc00::/7"},
	{netip.MustParsePrefix("169.254.0.0/16"), LinkLocal, "link-local network 169.254.0.0/16"},
	{netip.MustParsePrefix("fe80::/10"), LinkLocal, "link-local network fe80::/10"},
}

// HostNetwork reports the network of the host in s, which may be a CSP
// source ("https://*.example.com:8443"), a URL ("http://[fd00::1]:8080/mcp",
// userinfo, path, query and fragment ignored), a host:port or a bare host.
//
// An IP literal is judged by its address: IPv4 in every spelling a browser
// accepts ("10.1", "0xa000001", "012.0.0.1"; see [LocalSource]), IPv6 in
// brackets or bare, an IPv4 address mapped into IPv6 as the IPv4 address.
// localhost and *.localhost are Loopback, since browsers resolve them so.
// Any other name is Public: HostNetwork does not resolve names. It never
// fails; what it cannot read is Public, or NotAddress when it ends in a
// number.
func HostNetwork(s string) Network {
	host, wildcard := hostOf(s)
	if strings.HasPrefix(host, "[") {
		// An IPv6 literal, with a zone perhaps ("[fe80::1%25eth0]").
		inner, closed := strings.CutSuffix(host[1:], "]")
		inner = strings.Replace(inner, "%25", "%", 1)
		if a, err := netip.ParseAddr(inner); err == nil && closed && !wildcard {
			return addrNetwork(a)
		}
		return Network{Kind: NotAddress}
	}
	host = asciiLower(host)
	name := strings.TrimSuffix(host, ".")
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return Network{Kind: Loopback}
	}
	if strings.Contains(host, ":") {
		// A bare IPv6 address (hostOf left it whole).
		if a, err := netip.ParseAddr(host); err == nil && !wildcard {
			return addrNetwork(a)
		}
		return Network{Kind: Public}
	}
	if !endsInNumber(host) {
		return Network{Kind: Public}
	}
	ip, ok := parseIPv4(host)
	if !ok || wildcard {
		return Network{Kind: NotAddress}
	}
	return addrNetwork(netip.AddrFrom4([4]byte{byte(ip >> 24), byte(ip >> 16), byte(ip >> 8), byte(ip)}))
}

// hostOf returns the host part of s, as HostNetwork describes s, with an
// IPv6 literal still in its brackets, and whether it had a leading "*.".
func hostOf(s string) (host string, wildcard bool) {
	if _, rest, ok := strings.Cut(s, "://"); ok {
		s = rest
	}
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	if i := strings.LastIndexByte(s, '@'); i >= 0 {
		s = s[i+1:]
	}
	s, wildcard = strings.CutPrefix(s, "*.")
	switch {
	case strings.HasPrefix(s, "["):
		if i := strings.IndexByte(s, ']'); i >= 0 {
			return s[:i+1], wildcard
		}
		return s, wildcard
	case strings.Count(s, ":") > 1:
		return s, wildcard // a bare IPv6 address: no port to cut
	}
	host, _, _ = strings.Cut(s, ":")
	return host, wildcard
}

// addrNetwork looks a up in blocks.
func addrNetwork(a netip.Addr) Network {
	a = a.WithZone("").Unmap()
	for _, b := range blocks {
		if b.prefix.Contains(a) {
			return Network{Kind: b.kind, Block: b.prefix}
		}
	}
	return Network{Kind: Public}
}
