package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/host/config"
	"github.com/mcphost/mcphost/internal/apiclient"
	"github.com/mcphost/mcphost/internal/termsafe"
)

// reloadBound bounds the whole request: the daemon waits up to a minute for
// new servers to come up before it answers.
const reloadBound = 2 * time.Minute

// reloadCmd asks the running daemon to reload its config file
// (POST /api/v1/reload) and prints what the reload changed, or with
// -dry-run what it would change.
func (e *env) reloadCmd(ctx context.Context, args []string) int {
	fs := e.newFlagSet("reload", "[-config FILE] [-dry-run] [-url URL] [-json]")
	cfgPath := fs.String("config", "", "the daemon's config `FILE`: its listen and data_dir say where the daemon is and where its owner token lies (default: ./mcphost.hcl, else ~/.config/mcphost/mcphost.hcl, else the embedded default)")
	dryRun := fs.Bool("dry-run", false, "only show what a reload would change")
	url := fs.String("url", "", "the daemon's `URL` (default: from the config's listen)")
	asJSON := fs.Bool("json", false, "print the daemon's answer as JSON (the plan, or the diagnostics as validate -json does)")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fs.Usage()
		return exitUsage
	}

	// The config is read only for where the daemon is and for the owner
	// token. Its errors are the daemon's to report (it may see another
	// environment, where every env() is set), unless they hide the
	// listen address.
	opts := config.Options{Executable: selfExecutable()}
	var (
		cfg   *config.Config
		diags hcl.Diagnostics
	)
	if *cfgPath == "" {
		*cfgPath, _ = findConfig()
	}
	if *cfgPath == "" {
		cfg, diags = config.Default(opts)
	} else {
		cfg, diags = config.LoadFile(*cfgPath, opts)
	}
	base := strings.TrimSuffix(*url, "/")
	if base == "" {
		if cfg.Listen == "" {
			e.printDiagnostics(cfg.Files, diags)
			fmt.Fprintln(e.stderr, "mcphost reload: the config's errors hide where the daemon listens; fix them, or give -url")
			return exitUsage
		}
		if _, port, _ := net.SplitHostPort(cfg.Listen); port == "0" {
			fmt.Fprintf(e.stderr, "mcphost reload: the config listens on %s, a port the daemon chose when it started; give -url (serve prints it)\n", cfg.Listen)
			return exitUsage
		}
		base = daemonURL(cfg)
	}
	haveToken := strings.TrimSpace(os.Getenv(tokenEnv)) != ""
	if cfg.DataDir == "" && !haveToken {
		// A file that does not parse: the daemon would refuse it with
		// the same diagnostics.
		e.printDiagnostics(cfg.Files, diags)
		fmt.Fprintf(e.stderr, "mcphost reload: the config's errors hide its data_dir, where the owner token lies; fix them (the daemon would refuse the file as it is), or set %s\n", tokenEnv)
		return exitUsage
	}
	if len(cfg.Principals) > 0 && !haveToken {
		fmt.Fprintf(e.stderr, "mcphost reload: the config has principals, so there is no owner token: set %s to the token of an admin principal\n", tokenEnv)
		return exitUsage
	}
	token, err := gatewayToken(cfg)
	if err != nil {
		fmt.Fprintf(e.stderr, "mcphost reload: %v\n", err)
		return exitFailure
	}

	ctx, cancel := context.WithTimeout(ctx, reloadBound)
	defer cancel()
	var body json.RawMessage
	stop := e.reloadProgress(*dryRun)
	err = apiclient.New(base, token).Reload(ctx, *dryRun, &body)
	stop()
	var ae *apiclient.Error
	switch {
	case err == nil:
		var plan host.ReloadPlan
		if err := json.Unmarshal(body, &plan); err != nil {
			fmt.Fprintf(e.stderr, "mcphost reload: the daemon's answer is not a plan: %v\n", err)
			return exitFailure
		}
		if *asJSON {
			e.writeJSON(body)
		} else {
			e.printPlan(plan)
		}
		return exitOK
	case errors.As(err, &ae) && ae.Status == http.StatusUnprocessableEntity:
		diags, err := decodeDiagnostics(ae.Body)
		if err != nil {
			fmt.Fprintf(e.stderr, "mcphost reload: the daemon's diagnostics: %v\n", err)
			return exitFailure
		}
		if *asJSON {
			e.stdout.Write(config.DiagnosticsJSON(diags))
		} else {
			e.printDiagnostics(localSources(*cfgPath, diags), diags)
		}
		fmt.Fprintf(e.stderr, "mcphost reload: the daemon's config file has errors (%s); the running config stays in force\n", plural(countErrors(diags), "error"))
		return exitUsage
	case errors.As(err, &ae) && ae.Status == http.StatusForbidden:
		fmt.Fprintf(e.stderr, "mcphost reload: %s\n", termsafe.Line(messageOf(ae)))
	default:
		fmt.Fprintf(e.stderr, "mcphost reload: %s\n", daemonErrorText(err))
	}
	return exitFailure
}

// reloadWait is how long a reload may take before the CLI says what the
// daemon is waiting for.
const reloadWait = time.Second

// reloadProgress says on stderr, once a reload has taken reloadWait, that
// the daemon is connecting the new and changed servers before it switches
// to the new config (the first start of an npx server downloads it): on a
// terminal as one line with the time so far, rewritten each second,
// elsewhere as one line. stop ends it and clears the terminal's line.
func (e *env) reloadProgress(dryRun bool) (stop func()) {
	if dryRun {
		return func() {}
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	tty := isTerminal(e.stderr)
	go func() {
		defer close(ended)
		start := time.Now()
		t := time.NewTicker(reloadWait)
		defer t.Stop()
		shown := false
		for {
			select {
			case <-done:
				if shown && tty {
					fmt.Fprint(e.stderr, "\r\x1b[K")
				}
				return
			case <-t.C:
			}
			const what = "mcphost reload: the daemon connects the new and changed servers before it switches to the new config (a first npx or uvx start downloads the package)"
			switch {
			case tty:
				fmt.Fprintf(e.stderr, "\r\x1b[K%s… %s", what, time.Since(start).Round(time.Second))
			case !shown:
				fmt.Fprintln(e.stderr, what+"; up to a minute…")
			}
			shown = true
		}
	}()
	return func() {
		close(done)
		<-ended
	}
}

// writeJSON prints a JSON answer indented, escaped for the terminal.
func (e *env) writeJSON(body []byte) {
	var out bytes.Buffer
	if err := json.Indent(&out, body, "", "  "); err != nil {
		out.Reset()
		out.Write(body)
	}
	out.WriteByte('\n')
	e.stdout.Write(termsafe.JSON(out.Bytes()))
}

// printPlan prints a reload's plan as a table. Every name came from the
// daemon, so each is escaped for the terminal.
func (e *env) printPlan(p host.ReloadPlan) {
	w := e.stdout
	switch {
	case p.DryRun && !p.Changes():
		fmt.Fprintln(w, "Dry run: a reload would change nothing.")
	case p.DryRun:
		fmt.Fprintln(w, "Dry run: nothing was changed; `mcphost reload` applies this plan.")
	case !p.Changes():
		fmt.Fprintln(w, "Reloaded: nothing changed.")
	default:
		fmt.Fprintln(w, "Reloaded.")
	}
	if p.From == p.To {
		fmt.Fprintf(w, "config  %s (the file is the config in force)\n", termsafe.Line(p.From))
	} else {
		fmt.Fprintf(w, "config  %s -> %s\n", termsafe.Line(p.From), termsafe.Line(p.To))
	}

	if len(p.Servers) > 0 {
		fmt.Fprintln(w)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "SERVER\tCHANGE\tATTRIBUTES")
		for _, s := range p.Servers {
			attrs := make([]string, len(s.Changed))
			for i, a := range s.Changed {
				attrs[i] = cell(a)
			}
			if len(attrs) == 0 {
				fmt.Fprintf(tw, "%s\t%s\n", cell(s.Name), cell(s.Action))
				continue
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\n", cell(s.Name), cell(s.Action), strings.Join(attrs, ", "))
		}
		tw.Flush()
	}

	fmt.Fprintln(w)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	changed := func(b bool) string {
		if b {
			return "changed"
		}
		return "unchanged"
	}
	fmt.Fprintf(tw, "policies\t%s (%s in force)\n", changed(p.PoliciesChanged), plural(p.Policies, "rule"))
	fmt.Fprintf(tw, "plugins\t%s (%s)\n", changed(p.PluginsChanged), plural(p.Plugins, "plugin"))
	fmt.Fprintf(tw, "principals\t%s\n", principalsLine(p.Principals))
	fmt.Fprintf(tw, "admins\t%s\n", changed(p.AdminsChanged))
	fmt.Fprintf(tw, "rate limits\t%s\n", changed(p.RateLimitsChanged))
	fmt.Fprintf(tw, "gateway\t%s\n", changed(p.GatewayChanged))
	if len(p.Settings) > 0 {
		fmt.Fprintf(tw, "settings\t%s (applied at once)\n", names(p.Settings))
	}
	if len(p.Ignored) > 0 {
		fmt.Fprintf(tw, "restart required\t%s (changed, but read only when mcphost starts)\n", names(p.Ignored))
	}
	tw.Flush()
	for _, s := range p.Servers {
		if s.Warning != "" {
			fmt.Fprintf(w, "\nwarning: server %s: %s: it cannot start as it is\n", cell(s.Name), termsafe.Line(s.Warning))
		}
	}
	if len(p.Unset) > 0 {
		fmt.Fprintf(w, "\nNot set in the daemon's environment (the plan compares without these values; a reload refuses the file until they are set):\n")
		for _, u := range p.Unset {
			fmt.Fprintf(w, "  %s\n", termsafe.Line(u))
		}
	}
}

// principalsLine sums up what a reload does to the principals: names
// only, never a token.
func principalsLine(p host.PrincipalPlan) string {
	if !p.Any() {
		return "unchanged"
	}
	var parts []string
	for _, g := range []struct {
		what  string
		names []string
	}{{"added", p.Added}, {"removed", p.Removed}, {"token rotated", p.Rotated}, {"groups or webshell changed", p.Changed}} {
		if len(g.names) > 0 {
			parts = append(parts, g.what+": "+names(g.names))
		}
	}
	return strings.Join(parts, "; ")
}

// names joins names escaped for the terminal.
func names(ns []string) string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = cell(n)
	}
	return strings.Join(out, ", ")
}

// decodeDiagnostics reads the diagnostics of a 422 answer (the form of
// validate -json) back into hcl.Diagnostics, every string escaped for the
// terminal.
func decodeDiagnostics(body []byte) (hcl.Diagnostics, error) {
	type pos struct {
		Line   int `json:"line"`
		Column int `json:"column"`
		Byte   int `json:"byte"`
	}
	var doc struct {
		Diagnostics []struct {
			Severity string `json:"severity"`
			Summary  string `json:"summary"`
			Detail   string `json:"detail"`
			Range    *struct {
				Filename string `json:"filename"`
				Start    pos    `json:"start"`
				End      pos    `json:"end"`
			} `json:"range"`
		} `json:"diagnostics"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	if len(doc.Diagnostics) == 0 {
		return nil, errors.New("the answer lists none")
	}
	var out hcl.Diagnostics
	for _, d := range doc.Diagnostics {
		hd := &hcl.Diagnostic{Severity: hcl.DiagError, Summary: termsafe.Line(d.Summary), Detail: termsafe.Text(d.Detail)}
		if d.Severity == "warning" {
			hd.Severity = hcl.DiagWarning
		}
		if r := d.Range; r != nil {
			hd.Subject = &hcl.Range{
				Filename: termsafe.Line(r.Filename),
				Start:    hcl.Pos{Line: r.Start.Line, Column: r.Start.Column, Byte: r.Start.Byte},
				End:      hcl.Pos{Line: r.End.Line, Column: r.End.Column, Byte: r.End.Byte},
			}
		}
		out = append(out, hd)
	}
	return out, nil
}

// localSources returns the source of the diagnostics' file when it is the
// -config file this command read, so the text shows the offending line;
// the daemon names its file as it was started with it, perhaps relative to
// another directory, so otherwise the positions go without a snippet.
func localSources(cfgPath string, diags hcl.Diagnostics) map[string]*hcl.File {
	files := map[string]*hcl.File{}
	if cfgPath == "" {
		return files
	}
	want, err := filepath.Abs(cfgPath)
	if err != nil {
		return files
	}
	src, err := os.ReadFile(cfgPath)
	if err != nil {
		return files
	}
	for _, d := range diags {
		if d.Subject == nil || files[d.Subject.Filename] != nil {
			continue
		}
		name := d.Subject.Filename
		if abs, err := filepath.Abs(name); err == nil && (abs == want || sameFile(name, cfgPath)) {
			files[name] = &hcl.File{Bytes: src}
		}
	}
	return files
}

func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}

func countErrors(diags hcl.Diagnostics) int {
	n := 0
	for _, d := range diags {
		if d.Severity == hcl.DiagError {
			n++
		}
	}
	return n
}
