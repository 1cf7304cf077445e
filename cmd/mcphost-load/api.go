package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"
	"time"
)

// apiClient talks to the daemon's JSON API over loopback.
type apiClient struct {
	base string // http://127.0.0.1:PORT
	hc   *http.Client
}

// newAPIClient keeps up to conns idle connections, so that a steady number
// of workers reuses its connections instead of opening new ones.
func newAPIClient(addr string, conns int) *apiClient {
	t := &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	return &apiClient{base: "http://" + addr, hc: &http.Client{Transport: t}}
}

// closeIdle closes the client's idle connections.
func (c *apiClient) closeIdle() { c.hc.CloseIdleConnections() }

// apiError is an answer with an unexpected status.
type apiError struct {
	Method, Path string
	Status       int
	Body         string
}

func (e *apiError) Error() string {
	body := e.Body
	if len(body) > 300 {
		body = body[:300] + "…"
	}
	return fmt.Sprintf("%s %s: %d %s", e.Method, e.Path, e.Status, body)
}

// do sends one request with the bearer token and returns the status and
// body; it fails only when the request could not be made.
func (c *apiClient) do(ctx context.Context, method, path, token string, body []byte) (int, []byte, error) {
	var r io.Reader
	if body != nil {
		r = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, r)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// getJSON decodes the answer of a GET that must be 200.
func (c *apiClient) getJSON(ctx context.Context, path, token string, v any) error {
	code, b, err := c.do(ctx, http.MethodGet, path, token, nil)
	if err != nil {
		return err
	}
	if code != http.StatusOK {
		return &apiError{http.MethodGet, path, code, string(b)}
	}
	return json.Unmarshal(b, v)
}

// session is one transcript session of one principal, used by one worker
// slot. acked counts the calls the API answered with a recorded entry.
type session struct {
	ID        string
	Principal string
	token     string
	acked     atomic.Int64
}

func (c *apiClient) createSession(ctx context.Context, p principalPlan, title string) (*session, error) {
	body, _ := json.Marshal(map[string]string{"title": title})
	code, b, err := c.do(ctx, http.MethodPost, "/api/v1/sessions", p.Token, body)
	if err != nil {
		return nil, err
	}
	if code != http.StatusCreated {
		return nil, &apiError{http.MethodPost, "/api/v1/sessions", code, string(b)}
	}
	var s struct{ ID string }
	if err := json.Unmarshal(b, &s); err != nil || s.ID == "" {
		return nil, fmt.Errorf("POST /api/v1/sessions: no session id in %s", b)
	}
	return &session{ID: s.ID, Principal: p.Name, token: p.Token}, nil
}

// entry is the part of a transcript entry the tool reads.
type entry struct {
	ID     string          `json:"id"`
	Seq    int64           `json:"seq"`
	Status string          `json:"status"`
	Error  string          `json:"error"`
	Result json.RawMessage `json:"result"`
	Trail  *struct {
		Plugins []struct {
			Plugin string `json:"plugin"`
			Error  string `json:"error"`
		} `json:"plugins"`
	} `json:"trail"`
}

// call posts one tool call in s and returns the recorded entry. A 200 or a
// 403 policy denial (both carry a recorded entry) counts as acknowledged.
func (c *apiClient) call(ctx context.Context, s *session, body []byte) (*entry, int, error) {
	path := "/api/v1/sessions/" + s.ID + "/calls"
	code, b, err := c.do(ctx, http.MethodPost, path, s.token, body)
	if err != nil {
		return nil, 0, err
	}
	switch code {
	case http.StatusOK:
		var e entry
		if err := json.Unmarshal(b, &e); err != nil {
			return nil, code, fmt.Errorf("POST %s: %v", path, err)
		}
		s.acked.Add(1)
		return &e, code, nil
	case http.StatusForbidden:
		var d struct {
			Entry *entry `json:"entry"`
		}
		if json.Unmarshal(b, &d) == nil && d.Entry != nil && d.Entry.ID != "" {
			s.acked.Add(1)
			return d.Entry, code, nil
		}
	}
	return nil, code, &apiError{http.MethodPost, path, code, string(b)}
}

// callBody is the JSON body of an echo call.
func callBody(server, text string) []byte {
	b, _ := json.Marshal(map[string]any{"server": server, "tool": "echo", "arguments": map[string]string{"text": text}})
	return b
}

// transcriptCheck compares the acknowledged calls of every session with
// what the API reports: the session's entry counter (GET /api/v1/sessions)
// and the entries themselves, paged (GET …/entries).
type transcriptCheck struct {
	Sessions     int      `json:"sessions"`
	Acknowledged int64    `json:"acknowledged"`
	Counted      int64    `json:"counted"` // sum of the sessions' "entries"
	Paged        int64    `json:"paged"`   // entries read back page by page
	Problems     []string `json:"problems,omitempty"`
}

func (c *apiClient) checkTranscript(ctx context.Context, sessions []*session, principals []principalPlan) transcriptCheck {
	var tc transcriptCheck
	counts := map[string]int64{}
	for _, p := range principals {
		var ss struct {
			Sessions []struct {
				ID      string `json:"id"`
				Entries int64  `json:"entries"`
			} `json:"sessions"`
		}
		if err := c.getJSON(ctx, "/api/v1/sessions", p.Token, &ss); err != nil {
			tc.Problems = append(tc.Problems, err.Error())
			continue
		}
		for _, s := range ss.Sessions {
			counts[s.ID] = s.Entries
		}
	}
	for _, s := range sessions {
		tc.Sessions++
		want := s.acked.Load()
		tc.Acknowledged += want
		got, ok := counts[s.ID]
		if !ok {
			tc.Problems = append(tc.Problems, fmt.Sprintf("session %s of %s is missing from GET /api/v1/sessions", s.ID, s.Principal))
		}
		tc.Counted += got
		if ok && got != want {
			tc.Problems = append(tc.Problems, fmt.Sprintf("session %s of %s: %d calls acknowledged, the session counts %d entries", s.ID, s.Principal, want, got))
		}
		paged, err := c.pageEntries(ctx, s)
		tc.Paged += paged
		if err != nil {
			tc.Problems = append(tc.Problems, err.Error())
		} else if paged != want {
			tc.Problems = append(tc.Problems, fmt.Sprintf("session %s of %s: %d calls acknowledged, %d entries read back", s.ID, s.Principal, want, paged))
		}
	}
	return tc
}

// pageEntries reads every entry of s, 500 at a time, and counts them.
func (c *apiClient) pageEntries(ctx context.Context, s *session) (int64, error) {
	var n int64
	err := c.eachEntry(ctx, s.ID, s.token, func(pagedEntry) { n++ })
	return n, err
}
