package confine

import (
	"strings"
	"testing"
)

func TestSeatbeltProfile(t *testing.T) {
	spec := Spec{Server: "fs", Dir: "/var/mcphost/sandboxes/fs", Read: []string{"/opt/ref"}, Write: []string{"/Users/me/notes"},
		Protected: []string{"/var/mcphost"}, Network: NetProxy}
	p := SeatbeltProfile(spec, "/var/mcphost/sandboxes/fs/home", "/var/mcphost/sandboxes/fs/tmp", "/opt/node", 51234)
	for _, want := range []string{
		"(deny default)",
		`(subpath "/opt/ref")`,
		`(subpath "/opt/node")`,
		"(allow file-read* file-write*\n  (subpath \"/var/mcphost/sandboxes/fs\")",
		`(subpath "/Users/me/notes")`,
		`(allow network-outbound (remote tcp "localhost:51234"))`,
		"(allow signal (target same-sandbox))",
	} {
		if !strings.Contains(p, want) {
			t.Errorf("the profile lacks %q:\n%s", want, p)
		}
	}
	if strings.Contains(p, "network*") {
		t.Errorf("a proxied server may reach the whole network:\n%s", p)
	}
	// Seatbelt applies the last rule that matches: the server's own
	// directory lies inside the protected data_dir, so its allow must come
	// after data_dir's deny.
	own := strings.LastIndex(p, `(subpath "/var/mcphost/sandboxes/fs")`)
	deny := strings.Index(p, `(deny file-read* file-write* (subpath "/var/mcphost"))`)
	if deny < 0 || own < deny {
		t.Errorf("the server's own directory must be allowed after data_dir is denied:\n%s", p)
	}

	quoted := SeatbeltProfile(Spec{Dir: "/tmp/a\"b", Network: NetNone}, "/h", "/t", "", 0)
	if !strings.Contains(quoted, `(subpath "/tmp/a\"b")`) {
		t.Errorf("a quote in a path is not escaped:\n%s", quoted)
	}
	if strings.Contains(quoted, "network") {
		t.Errorf("network none allows some network:\n%s", quoted)
	}
}
