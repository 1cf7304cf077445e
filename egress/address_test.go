package egress

import (
	"net/netip"
	"testing"
)

func TestForbidden(t *testing.T) {
	tests := []struct {
		addr string
		want string // "" for an address a granted name may lead to
	}{
		{"93.184.215.14", ""},
		{"2606:2800:21f:cb07:6820:80da:af6b:8b2c", ""},
		{"127.0.0.1", "a loopback address"},
		{"127.8.9.10", "a loopback address"},
		{"::1", "a loopback address"},
		{"::ffff:127.0.0.1", "a loopback address"},
		{"0.0.0.0", "an unspecified address"},
		{"0.1.2.3", "an unspecified address"},
		{"::", "an unspecified address"},
		{"169.254.169.254", "the cloud metadata address"},
		{"169.254.1.1", "a link-local address"},
		{"fe80::1%eth0", "a link-local address"},
		{"10.0.0.1", "a private address"},
		{"172.16.5.4", "a private address"},
		{"192.168.1.1", "a private address"},
		{"fd00:ec2::254", "a private address"},
		{"fec0::1", "a private address"},
		{"224.0.0.251", "a multicast address"},
		{"ff02::1", "a multicast address"},
		{"100.64.0.1", "a shared (CGNAT) address"},
		{"100.127.255.255", "a shared (CGNAT) address"},
		{"100.128.0.1", ""},
		{"255.255.255.255", "a reserved address"},
		{"240.0.0.1", "a reserved address"},
		{"::7f00:1", "a reserved address"},
		{"64:ff9b::7f00:1", "a loopback address"},
		{"64:ff9b::a00:1", "a private address"},
		{"64:ff9b::5db8:d70e", ""},
		{"64:ff9b:1:7f00:0:100::", "a loopback address"}, // 127.0.0.1 around octet 8
		{"64:ff9b:1:a00:0:100::", "a private address"},   // 10.0.0.1
		{"64:ff9b:1:808:8:800::", ""},                    // 8.8.8.8
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			if got := forbidden(netip.MustParseAddr(tt.addr)); got != tt.want {
				t.Errorf("forbidden(%s) = %q, want %q", tt.addr, got, tt.want)
			}
		})
	}
}
