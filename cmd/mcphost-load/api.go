package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/mcphost/mcphost/internal/apiclient"
)

// newAPIClient is a client of the daemon's JSON API at addr over loopback,
// with no principal of its own (each request is made WithToken). It keeps
// up to conns idle connections, so that a steady number of workers reuses
// its connections instead of opening new ones.
func newAPIClient(addr string, conns int) *apiclient.Client {
	t := &http.Transport{
		MaxIdleConns:        conns,
		MaxIdleConnsPerHost: conns,
		IdleConnTimeout:     time.Minute,
		DisableCompression:  true,
	}
	return apiclient.New("http://"+addr, "").WithHTTPClient(&http.Client{Transport: t})
}

// describe words an error answer as the tool's reports give it: the
// request, the status and the body (cut at 300 bytes).
func describe(err error) error {
	var ae *apiclient.Error
	if !errors.As(err, &ae) {
		return err
	}
	body := string(ae.Body)
	if len(body) > 300 {
		body = body[:300] + "…"
	}
	return fmt.Errorf("%s %s: %d %s", ae.Method, ae.Path, ae.Status, body)
}

// session is one transcript session of one principal, used by one worker
// slot. acked counts the calls the API answered with a recorded entry.
type session struct {
	ID        string
	Principal string
	token     string
	acked     atomic.Int64
}

func createSession(ctx context.Context, c *apiclient.Client, p principalPlan, title string) (*session, error) {
	id, err := c.WithToken(p.Token).CreateSession(ctx, title)
	if err != nil {
		return nil, describe(err)
	}
	return &session{ID: id, Principal: p.Name, token: p.Token}, nil
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

// call makes one tool call in s through c, a client with s's token, and
// returns the recorded entry with the status: 200, or 403 for a policy
// denial; both carry a recorded entry and count as acknowledged.
func call(ctx context.Context, c *apiclient.Client, s *session, req apiclient.CallRequest) (*entry, int, error) {
	var e entry
	err := c.Call(ctx, s.ID, req, &e)
	if err == nil {
		s.acked.Add(1)
		return &e, http.StatusOK, nil
	}
	var ae *apiclient.Error
	if !errors.As(err, &ae) {
		return nil, 0, err
	}
	if ae.Status == http.StatusForbidden && ae.Entry != nil {
		var d entry
		if json.Unmarshal(ae.Entry, &d) == nil && d.ID != "" {
			s.acked.Add(1)
			return &d, ae.Status, nil
		}
	}
	return nil, ae.Status, describe(err)
}

// echoCall is an echo call of text on server.
func echoCall(server, text string) apiclient.CallRequest {
	args, _ := json.Marshal(map[string]string{"text": text})
	return apiclient.CallRequest{Server: server, Tool: "echo", Arguments: args}
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

func checkTranscript(ctx context.Context, c *apiclient.Client, sessions []*session, principals []principalPlan) transcriptCheck {
	var tc transcriptCheck
	counts := map[string]int64{}
	for _, p := range principals {
		var ss []struct {
			ID      string `json:"id"`
			Entries int64  `json:"entries"`
		}
		if err := c.WithToken(p.Token).Sessions(ctx, &ss); err != nil {
			tc.Problems = append(tc.Problems, describe(err).Error())
			continue
		}
		for _, s := range ss {
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
		paged, err := pageEntries(ctx, c, s)
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
func pageEntries(ctx context.Context, c *apiclient.Client, s *session) (int64, error) {
	var n int64
	err := eachEntry(ctx, c, s.ID, s.token, func(pagedEntry) { n++ })
	return n, err
}
