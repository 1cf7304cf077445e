package sandbox

import (
	"net/netip"
	"testing"
)

// TestHostNetwork pins where a CSP source, a URL or a host is (RATIONALE.md,
// "App CSP: no loopback, private or link-local sources"): IPv4 in the
// spellings browsers accept, IPv6 bracketed and bare, IPv4 mapped into IPv6,
// with and without scheme, port, path and wildcard; names are not resolved.
func TestHostNetwork(t *testing.T) {
	p := netip.MustParsePrefix
	tests := []struct {
		in    string
		kind  NetworkKind
		block string // "" for the zero prefix
		name  string // Network.String, when the case checks it
	}{
		// Private IPv4, every form of input.
		{"10.0.0.1", Private, "10.0.0.0/8", "private network 10.0.0.0/8"},
		{"10.0.0.1:8080", Private, "10.0.0.0/8", ""},
		{"http://10.0.0.1", Private, "10.0.0.0/8", ""},
		{"http://10.0.0.1:8080", Private, "10.0.0.0/8", ""},
		{"HTTP://10.0.0.1:8080/mcp?x=1#f", Private, "10.0.0.0/8", ""},
		{"http://user:pw@10.0.0.1:8080/", Private, "10.0.0.0/8", ""},
		{"http://10.1", Private, "10.0.0.0/8", ""},      // 10.0.0.1, short form
		{"http://0xa000001", Private, "10.0.0.0/8", ""}, // one hex number
		{"http://012.0.0.1", Private, "10.0.0.0/8", ""}, // octal first part
		{"http://167772161", Private, "10.0.0.0/8", ""}, // one decimal number
		{"http://10.255.255.255.", Private, "10.0.0.0/8", ""},
		{"https://172.16.0.1", Private, "172.16.0.0/12", ""},
		{"https://172.31.255.254:443", Private, "172.16.0.0/12", ""},
		{"https://172.32.0.1", Public, "", ""},
		{"https://172.15.255.255", Public, "", ""},
		{"ws://192.168.1.1", Private, "192.168.0.0/16", ""},
		{"ws://192.169.1.1", Public, "", ""},
		{"http://100.64.0.1", Private, "100.64.0.0/10", "carrier-grade NAT network 100.64.0.0/10"},
		{"http://100.127.255.255", Private, "100.64.0.0/10", ""},
		{"http://100.128.0.1", Public, "", ""},
		// Link-local and metadata.
		{"http://169.254.1.1", LinkLocal, "169.254.0.0/16", "link-local network 169.254.0.0/16"},
		{"http://169.254.169.254", Metadata, "169.254.169.254/32", "cloud metadata address 169.254.169.254"},
		{"http://169.254.169.254:80/latest/meta-data/", Metadata, "169.254.169.254/32", ""},
		{"http://2852039166", Metadata, "169.254.169.254/32", ""}, // the same as one number
		{"http://100.100.100.200", Metadata, "100.100.100.200/32", ""},
		// Loopback, as LocalSource sees it.
		{"http://127.0.0.1:7777", Loopback, "127.0.0.0/8", ""},
		{"http://127.1", Loopback, "127.0.0.0/8", ""},
		{"http://0", Loopback, "0.0.0.0/32", ""},
		{"http://localhost:3000", Loopback, "", "loopback (this machine)"},
		{"https://*.localhost", Loopback, "", ""},
		{"http://LOCALHOST.", Loopback, "", ""},
		// IPv6, bracketed (URLs) and bare (hosts).
		{"http://[::1]:9000/mcp", Loopback, "::1/128", ""},
		{"::1", Loopback, "::1/128", ""},
		{"http://[::]", Loopback, "::/128", ""},
		{"http://[fd00::1]:8080", Private, "fc00::/7", "unique local network fc00::/7"},
		{"fc00::1", Private, "fc00::/7", ""},
		{"[fdff:ffff::1]", Private, "fc00::/7", ""},
		{"http://[FE80::1]", LinkLocal, "fe80::/10", ""},
		{"http://[fe80::1%25eth0]:80/", LinkLocal, "fe80::/10", ""},
		{"fe80::1%eth0", LinkLocal, "fe80::/10", ""},
		{"http://[fd00:ec2::254]", Metadata, "fd00:ec2::254/128", ""},
		{"http://[2001:db8::1]", Public, "", ""},
		{"http://[fec0::1]", Public, "", ""}, // site-local, deprecated
		// IPv4 mapped into IPv6 is judged as IPv4.
		{"http://[::ffff:10.0.0.1]", Private, "10.0.0.0/8", ""},
		{"http://[::ffff:a00:1]:80", Private, "10.0.0.0/8", ""},
		{"::ffff:192.168.0.1", Private, "192.168.0.0/16", ""},
		{"http://[::ffff:169.254.169.254]", Metadata, "169.254.169.254/32", ""},
		{"http://[::ffff:127.0.0.1]", Loopback, "127.0.0.0/8", ""},
		{"http://[::ffff:8.8.8.8]", Public, "", ""},
		// Wildcards: over a name, a name; over a number, nothing reachable.
		{"https://*.example.com", Public, "", ""},
		{"https://*.10.0.0.1", NotAddress, "", "a numeric host that is not an IPv4 address"},
		{"https://*.0.0.1:443", NotAddress, "", ""},
		// Names are not resolved; bad numbers are not addresses.
		{"https://router.lan", Public, "", ""},
		{"https://10.0.0.1.example.com", Public, "", ""},
		{"https://example.com", Public, "", "a public address or a DNS name"},
		{"http://8.8.8.8", Public, "", ""},
		{"http://999.1.1.1", NotAddress, "", ""},
		{"http://a.b.1", NotAddress, "", ""},
		{"http://[not-an-address]", NotAddress, "", ""},
		{"http://[::1", NotAddress, "", ""},
		{"", Public, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := HostNetwork(tt.in)
			var want netip.Prefix
			if tt.block != "" {
				want = p(tt.block)
			}
			if got.Kind != tt.kind || got.Block != want {
				t.Errorf("HostNetwork(%q) = %v %v, want %v %v", tt.in, got.Kind, got.Block, tt.kind, want)
			}
			if tt.name != "" && got.String() != tt.name {
				t.Errorf("HostNetwork(%q).String() = %q, want %q", tt.in, got.String(), tt.name)
			}
		})
	}
}
