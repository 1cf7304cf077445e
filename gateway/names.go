package gateway

import (
	"strings"

	"github.com/mcphost/mcphost/host"
)

// A codec maps an endpoint's names and URIs to the upstream ones and back.
// On an aggregate endpoint a prompt is SERVER__PROMPT (like a tool), a
// ui:// resource is ui://SERVER+REST (still a ui:// URI, so a client knows
// an App resource) and any other resource is SERVER+URI (a valid URI whose
// scheme is SERVER+SCHEME). A server name has no "+" and no "__" prefix
// ambiguity for what it encodes: decoding splits at the first separator.
// On a passthrough endpoint every name and URI is the upstream's.
type codec struct {
	server string // passthrough: the one server; "" for an aggregate
}

func (c codec) aggregate() bool { return c.server == "" }

// promptName is the endpoint's name of a prompt.
func (c codec) promptName(server, name string) string {
	if !c.aggregate() {
		return name
	}
	return host.GatewayName(server, name)
}

// uri encodes an upstream URI of server.
func (c codec) uri(server, uri string) string {
	if !c.aggregate() || uri == "" {
		return uri
	}
	if rest, ok := strings.CutPrefix(uri, "ui://"); ok {
		return "ui://" + server + "+" + rest
	}
	return server + "+" + uri
}

// decodeURI returns the server and upstream URI of an endpoint URI; ok is
// false when it names no server.
func (c codec) decodeURI(uri string) (server, upstream string, ok bool) {
	if !c.aggregate() {
		return c.server, uri, true
	}
	if rest, isUI := strings.CutPrefix(uri, "ui://"); isUI {
		server, rest, ok = strings.Cut(rest, "+")
		return server, "ui://" + rest, ok && server != ""
	}
	server, rest, ok := strings.Cut(uri, "+")
	// A ui:// resource has the ui://SERVER+ form only: one URI, one name.
	return server, rest, ok && server != "" && rest != "" && !strings.HasPrefix(rest, "ui://")
}
