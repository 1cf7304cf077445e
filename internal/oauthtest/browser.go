package oauthtest

import (
	"context"
	"fmt"
	"html"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"time"
)

// NewBrowser returns a client that does what a browser does with a
// sign-in link: it keeps cookies and follows redirects, but stops at the
// WebShell (a redirect to "/"), which the tests do not serve.
func NewBrowser() *http.Client {
	jar, err := cookiejar.New(nil)
	if err != nil {
		panic(err) // cookiejar.New fails only for a bad public suffix list
	}
	return &http.Client{Jar: jar, Timeout: 30 * time.Second, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if req.URL.Path == "/" {
			return http.ErrUseLastResponse
		}
		return nil
	}}
}

// Landing is where a browser that opened a launch URL ended.
type Landing struct {
	// Asked is the text of mcphost's confirmation page when it was shown
	// (and then confirmed), "" when the launch went on at once.
	Asked string
	// Status, Location and Page are the last answer: the callback's page,
	// or its redirect to the WebShell.
	Status   int
	Location string
	Page     string
}

var (
	confirmForm  = regexp.MustCompile(`<form method="post" action="([^"]+)">`)
	confirmToken = regexp.MustCompile(`<input type="hidden" name="confirm" value="([^"]+)">`)
	tags         = regexp.MustCompile(`<[^>]*>`)
)

// PageText is the text of an HTML page: its tags dropped, its entities
// decoded, its white space collapsed.
func PageText(page string) string {
	return strings.Join(strings.Fields(html.UnescapeString(tags.ReplaceAllString(page, " "))), " ")
}

// OpenLaunch opens an mcphost sign-in launch URL in b as its user would:
// when mcphost shows its confirmation page, the user continues (a POST
// from the page, with the headers a browser sends); the authorization
// server approves. It needs no *testing.T, so programs may use it too.
func OpenLaunch(ctx context.Context, b *http.Client, launchURL string) (Landing, error) {
	var l Landing
	resp, body, err := fetch(ctx, b, http.MethodGet, launchURL, "", nil)
	if err != nil {
		return l, err
	}
	if resp.StatusCode == http.StatusOK {
		form, tok := confirmForm.FindStringSubmatch(body), confirmToken.FindStringSubmatch(body)
		if form == nil || tok == nil {
			return l, fmt.Errorf("the launch URL answered a page without a confirmation form: %s", PageText(body))
		}
		l.Asked = PageText(body)
		u, err := resp.Request.URL.Parse(html.UnescapeString(form[1]))
		if err != nil {
			return l, err
		}
		origin := resp.Request.URL.Scheme + "://" + resp.Request.URL.Host
		answer := url.Values{"confirm": {html.UnescapeString(tok[1])}}.Encode()
		resp, body, err = fetch(ctx, b, http.MethodPost, u.String(), answer, http.Header{
			"Content-Type":   {"application/x-www-form-urlencoded"},
			"Origin":         {origin},
			"Sec-Fetch-Site": {"same-origin"},
		})
		if err != nil {
			return l, err
		}
	}
	l.Status, l.Location, l.Page = resp.StatusCode, resp.Header.Get("Location"), body
	return l, nil
}

// fetch makes one request (and the redirects it leads to) and reads the
// last answer's body.
func fetch(ctx context.Context, b *http.Client, method, u, body string, header http.Header) (*http.Response, string, error) {
	req, err := http.NewRequestWithContext(ctx, method, u, strings.NewReader(body))
	if err != nil {
		return nil, "", err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := b.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, "", err
	}
	return resp, string(raw), nil
}
