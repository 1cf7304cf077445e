package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	neturl "net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/apiclient"
	"github.com/mcphost/mcphost/internal/termsafe"
	"github.com/mcphost/mcphost/oauth"
)

const authUsage = `Usage:
  mcphost auth login  [-config FILE] [-url URL] SERVER   sign in to SERVER: prints a URL to open, waits
  mcphost auth logout [-config FILE] [-url URL] SERVER   sign out of SERVER (tokens revoked and deleted)
  mcphost auth status [-config FILE] [-url URL] [-json] [SERVER]
                                                         who is signed in where

The commands talk to the running daemon (mcphost serve): its listen and
data_dir come from the config, the token from $MCPHOST_TOKEN or the owner
token in data_dir. Nothing opens a browser: open the printed URL yourself.
`

// loginWait bounds how long login waits for the browser; flowWait is how
// long one request for the flow's state may wait for it to change.
const (
	loginWait = oauth.FlowTTL
	flowWait  = 30 * time.Second
)

// authCmd is `mcphost auth login|logout|status`.
func (e *env) authCmd(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(e.stderr, authUsage)
		return exitUsage
	}
	sub := args[0]
	fs := e.newFlagSet("auth "+sub, "[-config FILE] [-url URL] SERVER")
	fs.Usage = func() { fmt.Fprint(e.stderr, authUsage) }
	cfgPath := fs.String("config", "", "the daemon's config `FILE` (default: ./mcphost.hcl, else ~/.config/mcphost/mcphost.hcl, else the embedded default)")
	url := fs.String("url", "", "the daemon's `URL` (default: from the config's listen)")
	asJSON := fs.Bool("json", false, "status: print JSON")
	if code := parseFlags(fs, args[1:]); code >= 0 {
		return code
	}
	server := fs.Arg(0)
	switch {
	case sub != "login" && sub != "logout" && sub != "status", fs.NArg() > 1,
		sub != "status" && server == "":
		fmt.Fprint(e.stderr, authUsage)
		return exitUsage
	}
	d, code := e.daemon("auth "+sub, *cfgPath, *url)
	if code >= 0 {
		return code
	}
	switch sub {
	case "login":
		return e.authLogin(ctx, d, server)
	case "logout":
		if err := d.SignOut(ctx, server); err != nil {
			fmt.Fprintf(e.stderr, "mcphost auth logout: %s\n", daemonErrorText(err))
			return exitFailure
		}
		fmt.Fprintf(e.stdout, "signed out of %s\n", termsafe.Line(server))
		return exitOK
	default:
		return e.authStatus(ctx, d, server, *asJSON)
	}
}

// authBound bounds each request of the auth commands, the longest a
// flow's state is waited for among them.
const authBound = 2 * time.Minute

// daemon finds the running daemon of a config; code ≥ 0 is an exit code.
func (e *env) daemon(cmd, cfgPath, url string) (*apiclient.Client, int) {
	cfg, ok := e.loadConfig(cfgPath)
	if !ok {
		return nil, exitUsage
	}
	base := strings.TrimSuffix(url, "/")
	if base == "" {
		if _, port, _ := net.SplitHostPort(cfg.Listen); port == "0" {
			fmt.Fprintf(e.stderr, "mcphost %s: the config listens on %s, a port the daemon chose when it started; give -url (serve prints it)\n", cmd, cfg.Listen)
			return nil, exitUsage
		}
		base = daemonURL(cfg)
	}
	token, err := gatewayToken(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost %s: %v\n", cmd, err)
		return nil, exitUsage
	}
	return apiclient.New(base, token).WithTimeout(authBound), -1
}

// authLogin starts a sign-in, prints its launch URL and waits for it.
func (e *env) authLogin(ctx context.Context, d *apiclient.Client, server string) int {
	var f oauth.Flow
	if err := d.StartSignIn(ctx, server, &f); err != nil {
		fmt.Fprintf(e.stderr, "mcphost auth login: %s\n", daemonErrorText(err))
		return exitFailure
	}
	fmt.Fprintf(e.stdout, "To sign in to %s for %s, open this URL in a browser (it works once, until %s):\n\n  %s\n\n",
		termsafe.Line(server), whose(f), f.ExpiresAt.Local().Format("15:04"), termsafe.Line(f.LaunchURL))
	fmt.Fprintf(e.stdout, "The page names the server and the principal; continue there if they are right.\n\n")
	if u, err := neturl.Parse(d.Base()); err == nil {
		if h := u.Hostname(); h == "127.0.0.1" || h == "localhost" || h == "::1" {
			fmt.Fprintf(e.stdout, "The browser must reach %s; from another machine, forward the port first: ssh -L %s:%s:%s THIS-HOST\n\n", d.Base(), u.Port(), h, u.Port())
		}
	}
	start := time.Now()
	deadline := start.Add(loginWait)
	for time.Now().Before(deadline) {
		var st oauth.Flow
		if err := d.SignInFlow(ctx, f.ID, flowWait, &st); err != nil {
			fmt.Fprintf(e.stderr, "mcphost auth login: %s\n", daemonErrorText(err))
			return exitFailure
		}
		switch st.State {
		case oauth.FlowDone:
			fmt.Fprintf(e.stdout, "signed in to %s; the credential is stored for %s\n", termsafe.Line(server), whose(f))
			return exitOK
		case oauth.FlowFailed:
			fmt.Fprintf(e.stderr, "mcphost auth login: the sign-in failed: %s\n", termsafe.Line(st.Error))
			return exitFailure
		case oauth.FlowLaunched:
			fmt.Fprintf(e.stdout, "the browser went to the authorization server; waiting for it to come back (%s)\n", time.Since(start).Round(time.Second))
		default:
			fmt.Fprintf(e.stdout, "waiting for the URL to be opened (%s)\n", time.Since(start).Round(time.Second))
		}
		if ctx.Err() != nil {
			return exitFailure
		}
	}
	fmt.Fprintf(e.stderr, "mcphost auth login: the sign-in was not completed within %s; run the command again\n", loginWait)
	return exitFailure
}

// whose names the principal whose credential a sign-in stores.
func whose(f oauth.Flow) string {
	if f.Principal == oauth.SharedPrincipal {
		return "everyone (the shared credential)"
	}
	return termsafe.Line(f.Principal)
}

// authStatus prints who is signed in where and which servers wait for a
// sign-in.
func (e *env) authStatus(ctx context.Context, d *apiclient.Client, server string, asJSON bool) int {
	var creds []oauth.Status
	if err := d.Credentials(ctx, server, &creds); err != nil {
		fmt.Fprintf(e.stderr, "mcphost auth status: %s\n", daemonErrorText(err))
		return exitFailure
	}
	servers, err := daemonServers(ctx, d)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost auth status: %s\n", daemonErrorText(err))
		return exitFailure
	}
	var waiting []host.ServerStatus
	for _, s := range servers {
		if (server == "" || s.Name == server) && (s.State == host.StateNeedsAuth || s.State == host.StateAuthError) {
			waiting = append(waiting, s)
		}
	}
	if asJSON {
		out, _ := json.MarshalIndent(map[string]any{"credentials": creds, "waiting": waiting}, "", "  ")
		e.stdout.Write(append(out, '\n'))
		return exitOK
	}
	tw := tabwriter.NewWriter(e.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SERVER\tPRINCIPAL\tISSUER\tSCOPES\tEXPIRES\tREFRESH")
	for _, c := range creds {
		exp := "-"
		if !c.ExpiresAt.IsZero() {
			exp = c.ExpiresAt.Local().Format(time.DateTime)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%t\n", termsafe.Line(c.Server), termsafe.Line(c.Principal), termsafe.Line(c.Issuer),
			termsafe.Line(strings.Join(c.Scopes, " ")), exp, c.Refresh)
	}
	tw.Flush()
	for _, s := range waiting {
		fmt.Fprintf(e.stdout, "%s: %s: %s\n", termsafe.Line(s.Name), s.State, termsafe.Line(s.LastError))
	}
	return exitOK
}
