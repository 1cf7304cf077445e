package egress

import "net/netip"

var (
	thisNetwork = netip.MustParsePrefix("0.0.0.0/8")      // "this network": 0.0.0.0 reaches the local machine
	sharedSpace = netip.MustParsePrefix("100.64.0.0/10")  // carrier-grade NAT (RFC 6598)
	reserved4   = netip.MustParsePrefix("240.0.0.0/4")    // reserved, with the broadcast address
	siteLocal   = netip.MustParsePrefix("fec0::/10")      // deprecated, still routed as private in places
	v4Compat    = netip.MustParsePrefix("::/96")          // deprecated IPv4-compatible addresses
	metadata    = netip.MustParseAddr("169.254.169.254")  // the cloud providers' instance metadata
	nat64       = netip.MustParsePrefix("64:ff9b::/96")   // the well-known NAT64 prefix (RFC 6052)
	nat64Local  = netip.MustParsePrefix("64:ff9b:1::/48") // the local-use one (RFC 8215)
)

// forbidden says what kind of address a is when a name granted by
// `allow_hosts` must not lead to it, such as "a loopback address", or "" when
// it may: the machine mcphost runs on, the networks it sits in, and the
// addresses that are no one's are reached only through a rule that names the
// address itself. An address that NAT64 translates is judged by the IPv4
// address inside it.
func forbidden(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	switch {
	case a.IsLoopback():
		return "a loopback address"
	case a.IsUnspecified(), thisNetwork.Contains(a):
		return "an unspecified address"
	case a == metadata:
		return "the cloud metadata address"
	case a.IsLinkLocalUnicast():
		return "a link-local address"
	case a.IsMulticast():
		return "a multicast address"
	case a.IsPrivate(), siteLocal.Contains(a):
		return "a private address"
	case sharedSpace.Contains(a):
		return "a shared (CGNAT) address"
	case reserved4.Contains(a), v4Compat.Contains(a):
		return "a reserved address"
	}
	b := a.As16()
	switch {
	case nat64.Contains(a):
		return forbidden(netip.AddrFrom4([4]byte(b[12:])))
	case nat64Local.Contains(a):
		// RFC 6052 §2.2: behind a /48 the IPv4 address is split around
		// the reserved octet 8.
		return forbidden(netip.AddrFrom4([4]byte{b[6], b[7], b[9], b[10]}))
	}
	return ""
}
