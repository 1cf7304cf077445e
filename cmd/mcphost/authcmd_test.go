package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/mcphost/mcphost/internal/oauthtest"
	"github.com/mcphost/mcphost/internal/testbin"
)

var launchLine = regexp.MustCompile(`^\s+(http://127\.0\.0\.1:\d+/oauth/launch/\S+)$`)

// TestAuthLoginThroughTheDaemon: `mcphost auth login` against a running
// daemon prints the launch URL, a browser-like client opens it, confirms
// the page that names the principal (the authorization server approves),
// login reports whose credential was stored; status shows it without a
// token; logout signs out.
func TestAuthLoginThroughTheDaemon(t *testing.T) {
	bin := testbin.Build(t, mcphostPkg)
	as := oauthtest.NewAS(t)
	prot := oauthtest.NewServer(t, as)
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "state")
	cfg := filepath.Join(dir, "mcphost.hcl")
	src := fmt.Sprintf("listen = \"127.0.0.1:0\"\ndata_dir = %q\n\nserver \"prot\" {\n  url = %q\n  auth {}\n}\n", dataDir, prot.URL)
	if err := os.WriteFile(cfg, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	d := startDaemon(t, bin, cfg)

	pr, pw := io.Pipe()
	var stderr bytes.Buffer
	done := make(chan int, 1)
	go func() {
		code := run(context.Background(), []string{"auth", "login", "-config", cfg, "-url", d.base, "prot"}, strings.NewReader(""), pw, &stderr)
		pw.Close()
		done <- code
	}()
	var out strings.Builder
	sc := bufio.NewScanner(pr)
	launched := false
	for sc.Scan() {
		line := sc.Text()
		out.WriteString(line + "\n")
		if m := launchLine.FindStringSubmatch(line); m != nil && !launched {
			launched = true
			// The operator's browser did not start the sign-in: the
			// page names the principal first, and the callback's page
			// says whose credential was stored.
			l, err := oauthtest.OpenLaunch(context.Background(), oauthtest.NewBrowser(), m[1])
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(l.Asked, "Sign in to prot for owner?") {
				t.Fatalf("the confirmation page said %q", l.Asked)
			}
			if text := oauthtest.PageText(l.Page); l.Status != http.StatusOK || !strings.Contains(text, "Signed in to prot as owner; the credential is stored for owner.") {
				t.Fatalf("the callback answered %d: %s", l.Status, text)
			}
		}
	}
	if code := <-done; code != 0 || !launched || !strings.Contains(out.String(), "signed in to prot; the credential is stored for owner") {
		t.Fatalf("login exited %d (launched %v)\nstdout:\n%s\nstderr:\n%s\ndaemon:\n%s", code, launched, out.String(), stderr.String(), d.stderr.String())
	}

	var so, se bytes.Buffer
	if code := run(context.Background(), []string{"auth", "status", "-config", cfg, "-url", d.base}, strings.NewReader(""), &so, &se); code != 0 {
		t.Fatalf("status exited %d: %s", code, se.String())
	}
	if !strings.Contains(so.String(), "prot") || !strings.Contains(so.String(), "owner") || !strings.Contains(so.String(), as.URL) {
		t.Fatalf("status:\n%s", so.String())
	}
	for _, tok := range prot.Seen() {
		if strings.Contains(so.String(), tok) || strings.Contains(d.stderr.String(), tok) {
			t.Fatal("a token in the status or the daemon's log")
		}
	}
	so.Reset()
	if code := run(context.Background(), []string{"auth", "logout", "-config", cfg, "-url", d.base, "prot"}, strings.NewReader(""), &so, &se); code != 0 {
		t.Fatalf("logout exited %d: %s", code, se.String())
	}
	if len(as.Revoked()) == 0 {
		t.Fatal("logout revoked nothing")
	}
}
