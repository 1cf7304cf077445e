package egress

import (
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
)

// Rule is one entry of `allow_hosts`: a host, or every subdomain of one,
// and the one port a connection to it may use.
type Rule struct {
	// Host is a lower-case DNS name without a trailing dot, or an IP
	// address in its canonical text form.
	Host string
	// Subdomains is set for "*.example.com": any name that ends in
	// ".example.com", not example.com itself (list the apex as a rule of
	// its own: the difference is the operator's to see).
	Subdomains bool
	// Port is the port the connection goes to.
	Port uint16
	// Addr is Host parsed when it is an IP literal.
	Addr netip.Addr
}

// String returns the rule as it is written in `allow_hosts`.
func (r Rule) String() string {
	h := r.Host
	if r.Subdomains {
		h = "*." + h
	}
	return net.JoinHostPort(h, strconv.Itoa(int(r.Port)))
}

// IsIP reports whether the rule names an IP address rather than a name.
func (r Rule) IsIP() bool { return r.Addr.IsValid() }

// ParseRule parses one `allow_hosts` entry: "host:port", "*.domain:port" or
// "ip:port" ("[v6]:port"). The port is required: a grant names the one
// service a server may reach, not every service of a host. The error says
// what is wrong with s in words an operator can act on.
func ParseRule(s string) (Rule, error) {
	host, portText, err := net.SplitHostPort(s)
	if err != nil {
		if !strings.Contains(s, ":") {
			return Rule{}, fmt.Errorf("%q has no port: write host:port, such as %q", s, s+":443")
		}
		return Rule{}, fmt.Errorf("%q is not host:port (%v)", s, strings.TrimPrefix(err.Error(), "address "+s+": "))
	}
	port, err := strconv.ParseUint(portText, 10, 16)
	if err != nil || port == 0 {
		return Rule{}, fmt.Errorf("%q has port %q: a port is a number from 1 to 65535", s, portText)
	}
	r := Rule{Port: uint16(port)}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Zone() != "" {
			return Rule{}, fmt.Errorf("%q names an address with a zone: write the address alone", s)
		}
		r.Addr = a.Unmap()
		r.Host = r.Addr.String()
		return r, nil
	}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		r.Subdomains = true
		host = rest
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if problem := nameProblem(host); problem != "" {
		return Rule{}, fmt.Errorf("%q: the host %s", s, problem)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		// "10.0.0.1." is the address written with a root dot: the same
		// rule as "10.0.0.1", and "*.10.0.0.1" names nothing.
		if r.Subdomains {
			return Rule{}, fmt.Errorf("%q puts a wildcard before an address: write the address alone", s)
		}
		r.Addr = a.Unmap()
		r.Host = r.Addr.String()
		return r, nil
	}
	if r.Subdomains && !strings.Contains(host, ".") {
		return Rule{}, fmt.Errorf("%q grants every name under a top-level domain: name the domain, such as \"*.example.com:443\"", s)
	}
	r.Host = host
	return r, nil
}

// nameProblem says what makes host unusable as a DNS name, or "".
func nameProblem(host string) string {
	if host == "" {
		return "is empty"
	}
	if len(host) > 253 {
		return "is longer than 253 characters"
	}
	for _, label := range strings.Split(host, ".") {
		if label == "" {
			return "has an empty label"
		}
		if len(label) > 63 {
			return "has a label longer than 63 characters"
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			switch {
			case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '_':
			case c == '-' && i > 0 && i < len(label)-1:
			case c == '*':
				return "has a wildcard that is not a leading \"*.\""
			default:
				return fmt.Sprintf("has the character %q, which no host name has", c)
			}
		}
	}
	return ""
}

// Match reports whether a connection to host:port is what r grants. host
// is a name (compared without case and trailing dot) or an IP literal.
func (r Rule) Match(host string, port uint16) bool {
	if port != r.Port {
		return false
	}
	if a, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		return r.IsIP() && a.Unmap() == r.Addr
	}
	if r.IsIP() {
		return false
	}
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	if r.Subdomains {
		return len(host) > len(r.Host)+1 && strings.HasSuffix(host, "."+r.Host)
	}
	return host == r.Host
}

// Allowed returns the first of rules that grants host:port.
func Allowed(rules []Rule, host string, port uint16) (Rule, bool) {
	for _, r := range rules {
		if r.Match(host, port) {
			return r, true
		}
	}
	return Rule{}, false
}
