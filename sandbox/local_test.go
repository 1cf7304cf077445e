package sandbox

import "testing"

// TestLocalSource pins which sources name this machine (RATIONALE.md, "App
// CSP: no loopback, private or link-local sources"), including the IPv4
// spellings browsers accept.
func TestLocalSource(t *testing.T) {
	tests := []struct {
		source string
		local  bool
	}{
		{"http://localhost", true},
		{"http://localhost:7777", true},
		{"ws://LOCALHOST:8080", true},
		{"https://app.localhost", true},
		{"https://*.localhost", true},
		{"http://127.0.0.1", true},
		{"http://127.0.0.1:7777", true},
		{"http://127.255.3.4", true},
		{"http://127.1", true},
		{"http://2130706433", true}, // 127.0.0.1 as one number
		{"http://0x7f000001", true}, // and in hex
		{"http://0x7f.0.0.1", true}, // hex part
		{"http://0177.0.0.1", true}, // octal part
		{"http://0", true},          // 0.0.0.0
		{"http://0.0.0.0:80", true}, // 0.0.0.0
		{"http://999.1.1.1", true},  // not an address at all: dropped too
		{"http://1.2.3.4.5", true},  // five parts: invalid
		{"http://09.1.1.1", true},   // bad octal
		{"https://*.0.0.1", true},   // a wildcard over a numeric suffix
		{"https://a.b.1", true},     // ends in a number, does not parse
		{"https://example.com", false},
		{"https://api.example.com:8443", false},
		{"https://localhost.example.com", false},
		{"https://mylocalhost", false},
		{"http://10.0.0.1", false},
		{"http://192.168.1.1", false},
		{"http://128.0.0.1", false},
		{"http://1.2.3.4", false},
		{"https://a1.example", false},
		{"https://0xzz.example", false},
		{"https://[::1]", false}, // invalid source: never passes ValidSource anyway
		{"'self'", false},
	}
	for _, tt := range tests {
		t.Run(tt.source, func(t *testing.T) {
			if got := LocalSource(tt.source); got != tt.local {
				t.Errorf("LocalSource(%q) = %v, want %v", tt.source, got, tt.local)
			}
		})
	}
}

func TestParseIPv4(t *testing.T) {
	tests := []struct {
		host string
		want uint32
		ok   bool
	}{
		{"127.0.0.1", 0x7f000001, true},
		{"127.1", 0x7f000001, true},
		{"127.0.1", 0x7f000001, true},
		{"2130706433", 0x7f000001, true},
		{"0x7f.1", 0x7f000001, true},
		{"0177.1", 0x7f000001, true},
		{"0x", 0, true},
		{"1.2.3.4.", 0x01020304, true},
		{"256.1.1.1", 0, false},
		{"1.2.3.256", 0, false},
		{"1.2.65536", 0, false},
		{"4294967296", 0, false},
		{"4294967295", 0xffffffff, true},
		{"08", 0, false},
		{"1..1", 0, false},
	}
	for _, tt := range tests {
		got, ok := parseIPv4(tt.host)
		if got != tt.want || ok != tt.ok {
			t.Errorf("parseIPv4(%q) = %#x, %v; want %#x, %v", tt.host, got, ok, tt.want, tt.ok)
		}
	}
}
