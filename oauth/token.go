package oauth

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"golang.org/x/oauth2"
)

// maxTokenResponse bounds a token endpoint's answer.
const maxTokenResponse = 1 << 20

// tokenResponse is a token endpoint's answer (RFC 6749 §5.1 and §5.2).
type tokenResponse struct {
	AccessToken  string          `json:"access_token"`
	TokenType    string          `json:"token_type"`
	RefreshToken string          `json:"refresh_token"`
	ExpiresIn    json.RawMessage `json:"expires_in"`
	Scope        string          `json:"scope"`
	Error        string          `json:"error"`
	ErrorDesc    string          `json:"error_description"`
}

// TokenError is an error answer of a token endpoint. Code is the OAuth
// error code ("invalid_grant", ...) or "" when the answer was not one.
type TokenError struct {
	Status int
	Code   string
	Desc   string
}

func (e *TokenError) Error() string {
	if e.Code == "" {
		return fmt.Sprintf("the token endpoint answered HTTP %d", e.Status)
	}
	s := fmt.Sprintf("the token endpoint refused (HTTP %d): %s", e.Status, clip(e.Code, 64))
	if e.Desc != "" {
		s += ": " + clip(e.Desc, 200)
	}
	return s
}

// parseTokenResponse reads a token endpoint's answer: a token on 200, a
// *TokenError otherwise. It never returns a secret in an error.
func parseTokenResponse(status int, body []byte, now time.Time) (*oauth2.Token, []string, error) {
	var tr tokenResponse
	jerr := json.Unmarshal(body, &tr)
	if status != http.StatusOK {
		te := &TokenError{Status: status}
		if jerr == nil {
			te.Code, te.Desc = tr.Error, tr.ErrorDesc
		}
		return nil, nil, te
	}
	if jerr != nil {
		return nil, nil, fmt.Errorf("the token endpoint's answer is not a JSON object (%d bytes)", len(body))
	}
	if tr.Error != "" {
		return nil, nil, &TokenError{Status: status, Code: tr.Error, Desc: tr.ErrorDesc}
	}
	if tr.AccessToken == "" {
		return nil, nil, fmt.Errorf("the token endpoint's answer has no access_token")
	}
	if tr.TokenType != "" && !strings.EqualFold(tr.TokenType, "bearer") {
		return nil, nil, fmt.Errorf("the token endpoint issued a %q token; mcphost sends only Bearer tokens", clip(tr.TokenType, 32))
	}
	tok := &oauth2.Token{AccessToken: tr.AccessToken, TokenType: "Bearer", RefreshToken: tr.RefreshToken}
	if len(tr.ExpiresIn) > 0 && string(tr.ExpiresIn) != "null" {
		raw := strings.Trim(string(tr.ExpiresIn), `"`)
		secs, err := strconv.ParseFloat(raw, 64)
		if err != nil || secs < 0 || secs > 10*365*24*3600 {
			return nil, nil, fmt.Errorf("the token endpoint's expires_in is not a number of seconds")
		}
		tok.Expiry = now.Add(time.Duration(secs * float64(time.Second)))
	}
	return tok, strings.Fields(tr.Scope), nil
}

// clientAuth authenticates a token or revocation request as the client's
// registration says: HTTP Basic, or client_id (and client_secret) in the
// form.
func clientAuth(req *http.Request, form url.Values, clientID, secret string, style oauth2.AuthStyle) {
	if style == oauth2.AuthStyleInHeader || (style == oauth2.AuthStyleAutoDetect && secret != "") {
		req.Header.Set("Authorization", "Basic "+base64.StdEncoding.EncodeToString(
			[]byte(url.QueryEscape(clientID)+":"+url.QueryEscape(secret))))
		return
	}
	form.Set("client_id", clientID)
	if secret != "" {
		form.Set("client_secret", secret)
	}
}
