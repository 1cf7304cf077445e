package config

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
)

// The checks of addresses, URLs and roots in a config.

// CheckListen checks that v is host:port with a numeric port.
func CheckListen(v string) error {
	_, port, err := net.SplitHostPort(v)
	if err != nil {
		var addrErr *net.AddrError
		if errors.As(err, &addrErr) {
			return errors.New(addrErr.Err)
		}
		return err
	}
	if port == "" {
		return errors.New("the port is missing")
	}
	if _, err := strconv.ParseUint(port, 10, 16); err != nil {
		return errors.New("the port is not a number from 0 to 65535")
	}
	return nil
}

// checkURL checks that raw is an absolute http or https URL with a host.
func checkURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil {
		var urlErr *url.Error
		if errors.As(err, &urlErr) {
			return urlErr.Err
		}
		return err
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
	case "":
		return errors.New("it has no scheme")
	default:
		return fmt.Errorf("the scheme %q is not http or https", u.Scheme)
	}
	if u.Host == "" || u.Hostname() == "" {
		return errors.New("it has no host")
	}
	return nil
}

// MaxRoots bounds the roots of one server block.
const MaxRoots = 64

// decodeRoots reads `roots`: a list of absolute file:// URIs, each with
// a path and no query or fragment, and returns the ranges of those it
// keeps (for the sandbox, which grants them).
func (l *loader) decodeRoots(b *serverBlock) ([]string, []hcl.Range) {
	roots, st := l.evalStringList(b.Roots, "roots")
	if st != valid {
		return nil, nil
	}
	if len(roots) > MaxRoots {
		l.add(&hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "Too many roots",
			Detail:   fmt.Sprintf("Server %q declares %d roots; at most %d are allowed.", b.Name, len(roots), MaxRoots),
			Subject:  b.RootsRange.Ptr(),
		})
		return nil, nil
	}
	out := make([]string, 0, len(roots))
	var ranges []hcl.Range
	seen := map[string]bool{}
	for i, r := range roots {
		subject := l.elementRange(b.Roots, i, b.RootsRange)
		if err := CheckRootURI(r); err != nil {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Invalid root",
				Detail:   fmt.Sprintf("Root %d of server %q (%q) %v. Write an absolute file URI, such as \"file:///home/me/project\".", i+1, b.Name, r, err),
				Subject:  subject.Ptr(),
			})
			continue
		}
		if seen[r] {
			l.add(&hcl.Diagnostic{
				Severity: hcl.DiagError,
				Summary:  "Duplicate root",
				Detail:   fmt.Sprintf("Server %q lists the root %q twice; remove one.", b.Name, r),
				Subject:  subject.Ptr(),
			})
			continue
		}
		seen[r] = true
		out = append(out, r)
		ranges = append(ranges, subject)
	}
	return out, ranges
}

// elementRange is the range of element i of a list expression written as
// a tuple, else fallback.
func (l *loader) elementRange(expr hcl.Expression, i int, fallback hcl.Range) hcl.Range {
	if exprs, diags := hcl.ExprList(expr); !diags.HasErrors() && i < len(exprs) {
		return exprs[i].Range()
	}
	return fallback
}

// CheckRootURI accepts an absolute file URI with a path and no query or
// fragment; the error says what is wrong.
func CheckRootURI(raw string) error {
	if !utf8.ValidString(raw) {
		return errors.New("is not valid UTF-8")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return fmt.Errorf("does not parse as a URI (%v)", err)
	}
	switch {
	case u.Scheme != "file":
		return fmt.Errorf("has the scheme %q; roots are file URIs", u.Scheme)
	case u.Opaque != "" || !strings.HasPrefix(u.Path, "/"):
		return errors.New("has no absolute path (a file URI starts with file:///)")
	case u.Host != "" && u.Host != "localhost":
		return fmt.Errorf("names the host %q; a root is a local directory (file:///path)", u.Host)
	case u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(raw, "?#"):
		return errors.New("has a query or fragment")
	}
	return nil
}

// checkPublicURL checks one entry of public_urls and returns its origin:
// http or https, a host, an optional port, and nothing else (a path, a
// query, a fragment or credentials have no meaning for an origin).
func checkPublicURL(raw string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", errors.New("it does not parse as a URL")
	}
	switch {
	case u.Scheme != "http" && u.Scheme != "https":
		return "", errors.New("the scheme must be http or https")
	case u.Host == "" || u.Hostname() == "":
		return "", errors.New("the host is missing")
	case u.User != nil:
		return "", errors.New("it must not carry a user name or password")
	case u.Path != "" && u.Path != "/", u.RawQuery != "", u.Fragment != "":
		return "", errors.New("it must be an origin only, without a path, query or fragment")
	}
	if p := u.Port(); p != "" {
		if n, err := strconv.ParseUint(p, 10, 16); err != nil || n == 0 {
			return "", errors.New("the port is not a number from 1 to 65535")
		}
	}
	return u.Scheme + "://" + strings.ToLower(u.Host), nil
}
