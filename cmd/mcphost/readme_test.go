package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mcphost/mcphost/internal/testbin"
)

// TestREADME runs the shell examples of README.md as a new user would, in
// a fresh home directory, and compares what they print with what the
// README shows; TestDocs does the same for every page of docs/. Every
// `$ COMMAND` of a console block runs, with these stand-ins:
//
//   - `go run ./cmd/mcphost` is the mcphost binary built from the same
//     package (on PATH as mcphost);
//   - `mcphost serve` is one daemon, started first, exactly as written (the
//     embedded default config, so on 127.0.0.1:7777), and the commands
//     meant for a running daemon run beside it; the pages of docs/ share
//     one daemon, run in the order of their names;
//   - `curl` is played by the test (curl may not be installed): its -s,
//     -H, -X and -d, sent as curl would; `TOKEN=…` is the daemon's token;
//   - `cat FILE` shows a file: the test writes what the page shows into
//     it; `mcphost validate bad.hcl` validates the hcl block right above;
//   - `mcphost import` finds a Claude Desktop config the test places in the
//     fresh home.
//
// Output: each line the page shows must be the line printed, where "…"
// stands for anything (a token, a cut JSON answer), a durations like 4.9µs
// for any duration, and ids the page shows are the ids printed. The sh
// blocks (install, the test command itself, the plugin build, the team
// config's commands, which need npm) are what CI runs anyway
// (plugins/examples_test.go builds the example plugins,
// host/config's TestREADMETeamConfig loads the team config).
func TestREADME(t *testing.T) {
	if ran := runConsoleDocs(t, []string{"README.md"}); ran < 3 {
		t.Fatalf("ran %d README commands; the README's console blocks were not found", ran)
	}
}

// TestDocs runs the console examples of every page of docs/, as TestREADME
// does the README's.
func TestDocs(t *testing.T) {
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	var files []string
	for _, p := range pages {
		files = append(files, filepath.ToSlash(filepath.Join("docs", filepath.Base(p))))
	}
	if ran := runConsoleDocs(t, files); ran < 9 {
		t.Fatalf("ran %d commands of docs/*.md; their console blocks were not found", ran)
	}
}

// runConsoleDocs runs every `$ command` of the console blocks of files
// (relative to the module root) against one daemon, in a fresh home, and
// returns how many ran.
func runConsoleDocs(t *testing.T, files []string) int {
	bin := testbin.Build(t, mcphostPkg)
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	home, work := t.TempDir(), t.TempDir()
	if err := os.Symlink(filepath.Join(root, "examples"), filepath.Join(work, "examples")); err != nil {
		t.Fatal(err)
	}
	claude := filepath.Join(home, ".config", "Claude", "claude_desktop_config.json")
	if err := os.MkdirAll(filepath.Dir(claude), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(claude, []byte(`{"mcpServers": {"revenue": {"command": "mcphost", "args": ["demo", "revenue"]}}}`), 0o644); err != nil {
		t.Fatal(err)
	}
	r := &readmeRun{t: t, dir: work, ids: map[string]string{}, vars: map[string]string{}}
	r.env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		k, _, _ := strings.Cut(kv, "=")
		return k == tokenEnv || k == "HOME" || strings.HasPrefix(k, "XDG_") || k == "PATH"
	})
	r.env = append(r.env, "HOME="+home, "PATH="+filepath.Dir(bin)+string(os.PathListSeparator)+os.Getenv("PATH"))
	if filepath.Base(bin) != "mcphost" {
		link := filepath.Join(t.TempDir(), "mcphost")
		if err := os.Symlink(bin, link); err != nil {
			t.Fatal(err)
		}
		r.env[len(r.env)-1] = "PATH=" + filepath.Dir(link) + string(os.PathListSeparator) + os.Getenv("PATH")
	}

	r.startDaemon()
	ran := 0
	for _, file := range files {
		src, err := os.ReadFile(filepath.Join(root, file))
		if err != nil {
			t.Fatal(err)
		}
		blocks := fencedBlocks(string(src))
		for i, b := range blocks {
			if b.lang != "console" {
				continue
			}
			for _, step := range consoleSteps(b) {
				step.file = file
				t.Run(fmt.Sprintf("%s:%d", file, step.line), func(t *testing.T) {
					r.t = t
					r.step(step, blocks[:i])
				})
				ran++
			}
		}
	}
	return ran
}

// block is one fenced block of a page.
type block struct {
	lang string
	line int // of its first content line
	text string
}

func fencedBlocks(md string) []block {
	var out []block
	var cur *block
	for i, line := range strings.Split(md, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &block{lang: strings.TrimSpace(strings.TrimPrefix(line, "```")), line: i + 2}
		case cur != nil && strings.HasPrefix(line, "```"):
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += line + "\n"
		}
	}
	return out
}

// consoleStep is one `$ command` and the output shown under it.
type consoleStep struct {
	file string // the page, relative to the module root
	line int
	cmd  string
	want []string
}

func consoleSteps(b block) []consoleStep {
	var out []consoleStep
	lines := strings.Split(strings.TrimRight(b.text, "\n"), "\n")
	for i := 0; i < len(lines); i++ {
		cmd, ok := strings.CutPrefix(lines[i], "$ ")
		if !ok {
			continue
		}
		step := consoleStep{line: b.line + i}
		// A trailing backslash continues the command.
		for strings.HasSuffix(cmd, "\\") && i+1 < len(lines) {
			i++
			cmd = strings.TrimSuffix(cmd, "\\") + " " + strings.TrimSpace(lines[i])
		}
		step.cmd = cmd
		for i+1 < len(lines) && !strings.HasPrefix(lines[i+1], "$ ") {
			i++
			step.want = append(step.want, lines[i])
		}
		for len(step.want) > 0 && strings.TrimSpace(step.want[len(step.want)-1]) == "" {
			step.want = step.want[:len(step.want)-1]
		}
		out = append(out, step)
	}
	return out
}

// readmeRun is the state the pages' commands share: the working
// directory, the environment, the daemon, and the ids and variables the
// commands printed and set.
type readmeRun struct {
	t         *testing.T
	dir       string
	env       []string
	daemonOut []string
	base      string // http://127.0.0.1:7777
	token     string
	ids       map[string]string // an id a page shows → the one printed
	vars      map[string]string // shell variables (TOKEN)
}

const readmeBound = 2 * time.Minute

// startDaemon runs `mcphost serve` exactly as the README does.
func (r *readmeRun) startDaemon() {
	t := r.t
	if ln, err := net.Listen("tcp", "127.0.0.1:7777"); err != nil {
		t.Fatalf("the README's daemon listens on 127.0.0.1:7777, which is taken here (%v); the test runs `mcphost serve` as written", err)
	} else {
		ln.Close()
	}
	cmd := exec.Command("mcphost", "serve")
	cmd.Dir, cmd.Env = r.dir, r.env
	cmd.Path = lookPathIn(t, r.env)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr syncBuffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	lines := make(chan string, 16)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	go func() { _ = cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(readmeBound):
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			<-exited
		}
	})
	deadline := time.After(readmeBound)
	for len(r.daemonOut) < 2 {
		select {
		case line, ok := <-lines:
			if !ok {
				t.Fatalf("mcphost serve ended early; stderr:\n%s", stderr.String())
			}
			r.daemonOut = append(r.daemonOut, line)
		case <-deadline:
			t.Fatalf("mcphost serve printed %q; stderr:\n%s", r.daemonOut, stderr.String())
		}
	}
	m := regexp.MustCompile(`at (http://[^/]+)/#token=([0-9a-f]+)`).FindStringSubmatch(r.daemonOut[0])
	if m == nil {
		t.Fatalf("mcphost serve's first line %q has no URL with a token", r.daemonOut[0])
	}
	r.base, r.token = m[1], m[2]
	// Wait until the demo server is ready, as a user would see it in the
	// WebShell before calling it.
	for ready := false; !ready; {
		var list struct {
			Servers []struct {
				Status string `json:"status"`
			} `json:"servers"`
		}
		code, body := r.request("GET", r.base+"/api/v1/servers", map[string]string{"Authorization": "Bearer " + r.token}, "")
		ready = code == 200 && json.Unmarshal(body, &list) == nil && len(list.Servers) > 0 && list.Servers[0].Status == "ready"
		select {
		case <-deadline:
			t.Fatalf("the demo server did not become ready: %d %s", code, body)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func lookPathIn(t *testing.T, env []string) string {
	for _, kv := range env {
		if p, ok := strings.CutPrefix(kv, "PATH="); ok {
			for _, dir := range filepath.SplitList(p) {
				if fi, err := os.Stat(filepath.Join(dir, "mcphost")); err == nil && !fi.IsDir() {
					return filepath.Join(dir, "mcphost")
				}
			}
		}
	}
	t.Fatal("mcphost is not on the test's PATH")
	return ""
}

// step runs one command of a page and compares its output. before are
// the blocks above it (for files the page shows).
func (r *readmeRun) step(s consoleStep, before []block) {
	cmd := s.cmd
	if i := strings.Index(cmd, "  #"); i >= 0 {
		cmd = strings.TrimSpace(cmd[:i]) // a comment for the reader
	}
	for from, to := range r.ids {
		cmd = strings.ReplaceAll(cmd, from, to)
	}
	var out string
	for _, part := range strings.Split(cmd, " && ") {
		out += r.run(strings.TrimSpace(part), s, before)
	}
	r.compare(s, out)
}

// run runs one simple command and returns its stdout.
func (r *readmeRun) run(cmd string, s consoleStep, before []block) string {
	t := r.t
	cmd = strings.Replace(cmd, "go run ./cmd/mcphost", "mcphost", 1)
	switch {
	case strings.HasPrefix(cmd, "TOKEN="):
		r.vars["TOKEN"] = r.token
		return ""
	case cmd == "mcphost serve":
		return strings.Join(r.daemonOut, "\n") + "\n"
	case strings.HasPrefix(cmd, "cat "):
		name := strings.TrimPrefix(cmd, "cat ")
		text := strings.Join(s.want, "\n") + "\n"
		if err := os.WriteFile(filepath.Join(r.dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return text
	case strings.HasPrefix(cmd, "curl "):
		return r.curl(shellWords(t, cmd)[1:])
	}
	args := shellWords(t, cmd)
	if args[0] != "mcphost" {
		t.Fatalf("%s:%d: the test does not know how to run %q", s.file, s.line, cmd)
	}
	if len(args) > 2 && args[1] == "validate" {
		for _, a := range args[2:] {
			if a == "bad.hcl" {
				r.writeShownFile(t, s, "bad.hcl", before)
			}
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), readmeBound)
	defer cancel()
	c := exec.CommandContext(ctx, lookPathIn(t, r.env), args[1:]...)
	c.Dir, c.Env = r.dir, r.env
	var stdout, stderr bytes.Buffer
	c.Stdout, c.Stderr = &stdout, &stderr
	err := c.Run()
	if ee, ok := err.(*exec.ExitError); ok && ee.ExitCode() == exitUsage && args[1] == "validate" {
		// validate of a file with errors: they go to stderr with exit 2,
		// and the page shows them.
		return stderr.String()
	}
	if err != nil {
		t.Fatalf("%s:%d: %s: %v\nstdout:\n%s\nstderr:\n%s", s.file, s.line, cmd, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// writeShownFile writes the file name from the hcl block right above the
// console block that uses it.
func (r *readmeRun) writeShownFile(t *testing.T, s consoleStep, name string, before []block) {
	if n := len(before); n > 0 && before[n-1].lang == "hcl" {
		if err := os.WriteFile(filepath.Join(r.dir, name), []byte(before[n-1].text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("%s:%d shows `validate %s` but no hcl block right above it", s.file, s.line, name)
}

// curl does what curl does with -s, -H, -X and -d: a POST when there is
// a body, the Content-Type curl sends for -d unless a header sets one.
func (r *readmeRun) curl(args []string) string {
	t := r.t
	method, body, url := "GET", "", ""
	headers := map[string]string{}
	for i := 0; i < len(args); i++ {
		switch a := args[i]; a {
		case "-s":
		case "-H":
			i++
			k, v, _ := strings.Cut(r.expand(args[i]), ":")
			headers[strings.TrimSpace(k)] = strings.TrimSpace(v)
		case "-X":
			i++
			method = args[i]
		case "-d":
			i++
			body = args[i]
			if method == "GET" {
				method = "POST"
			}
			if _, ok := headers["Content-Type"]; !ok {
				headers["Content-Type"] = "application/x-www-form-urlencoded"
			}
		default:
			if strings.HasPrefix(a, "-") {
				t.Fatalf("the test's curl does not know %s", a)
			}
			url = r.expand(a)
		}
	}
	code, b := r.request(method, url, headers, body)
	if code/100 != 2 {
		t.Fatalf("curl %s %s: %d %s", method, url, code, b)
	}
	// The ids a page shows in an answer name the ones printed here.
	return string(b) + "\n"
}

func (r *readmeRun) request(method, url string, headers map[string]string, body string) (int, []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), readmeBound)
	defer cancel()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		r.t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		r.t.Fatalf("%s %s: %v", method, url, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// expand replaces $TOKEN.
func (r *readmeRun) expand(s string) string {
	for k, v := range r.vars {
		s = strings.ReplaceAll(s, "$"+k, v)
	}
	return s
}

// shellWords splits a command line as sh would, for the quoting the
// pages use ('…' and "…" without nesting).
func shellWords(t *testing.T, s string) []string {
	var words []string
	var cur strings.Builder
	in, started := byte(0), false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case in != 0 && c == in:
			in = 0
		case in != 0:
			cur.WriteByte(c)
		case c == '\'' || c == '"':
			in, started = c, true
		case c == ' ' || c == '\t':
			if started {
				words = append(words, cur.String())
				cur.Reset()
				started = false
			}
		default:
			cur.WriteByte(c)
			started = true
		}
	}
	if in != 0 {
		t.Fatalf("unbalanced quotes in %q", s)
	}
	if started {
		words = append(words, cur.String())
	}
	return words
}

var (
	durationRE = regexp.MustCompile(`[0-9]+(\\\.[0-9]+)?(µs|ms|ns|s)`)
	hexCutRE   = regexp.MustCompile(`[0-9a-f]+…`)
	idRE       = regexp.MustCompile(`"id":"([a-z]_[0-9a-f]+)"`)
)

// compare checks the output against the lines the page shows.
func (r *readmeRun) compare(s consoleStep, out string) {
	t := r.t
	got := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if len(s.want) == 0 {
		return
	}
	if len(got) < len(s.want) {
		t.Fatalf("%s:%d: %s printed %d lines, the page shows %d\ngot:\n%s", s.file, s.line, s.cmd, len(got), len(s.want), out)
	}
	for i, want := range s.want {
		// An id the page shows stands for the one printed.
		for from, to := range r.ids {
			want = strings.ReplaceAll(want, from, to)
		}
		if m := idRE.FindStringSubmatch(want); m != nil {
			if g := idRE.FindStringSubmatch(got[i]); g != nil {
				r.ids[m[1]] = g[1]
				want = strings.Replace(want, m[1], g[1], 1)
			}
		}
		pattern := regexp.QuoteMeta(strings.TrimRight(want, " "))
		pattern = hexCutRE.ReplaceAllString(pattern, `[0-9a-f]+`)
		pattern = durationRE.ReplaceAllString(pattern, `[0-9.]+(µs|ms|ns|s)`)
		pattern = strings.ReplaceAll(pattern, "…", ".*")
		if !regexp.MustCompile("^" + pattern + "$").MatchString(strings.TrimRight(got[i], " ")) {
			printed := got[i]
			if len(printed) > 400 {
				printed = printed[:400] + "…"
			}
			t.Errorf("%s:%d: %s, line %d:\n page:    %s\n printed: %s", s.file, s.line, s.cmd, i+1, want, printed)
		}
	}
}

// TestDocsCLIFlags: every flag the CLI synopsis of docs/configuration.md
// gives a command is in the usage text's synopsis of that command, and the
// client flags are in both.
func TestDocsCLIFlags(t *testing.T) {
	src, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	md := string(src)
	i := strings.Index(md, "## The CLI\n")
	if i < 0 {
		t.Fatal(`docs/configuration.md has no "## The CLI" section`)
	}
	blocks := fencedBlocks(md[i:])
	if len(blocks) == 0 {
		t.Fatal("the CLI section has no code block")
	}
	flagRE := regexp.MustCompile(`(?:^|[\s\[|])(-[a-z][a-z-]*)`)
	flagsOf := func(text string) map[string]map[string]bool {
		out := map[string]map[string]bool{}
		cmd := ""
		for _, line := range strings.Split(text, "\n") {
			f := strings.Fields(line)
			switch {
			case len(f) >= 2 && f[0] == "mcphost":
				cmd = f[1]
			case len(f) == 0 || !strings.HasPrefix(line, " "):
				cmd = ""
			}
			if cmd == "" {
				continue
			}
			if out[cmd] == nil {
				out[cmd] = map[string]bool{}
			}
			syn := line
			if strings.Contains(syn, "   ") && !strings.HasPrefix(strings.TrimSpace(syn), "[") {
				// The synopsis, not the description after it.
				syn = strings.SplitN(strings.TrimLeft(syn, " "), "   ", 2)[0]
			}
			for _, m := range flagRE.FindAllStringSubmatch(syn, -1) {
				out[cmd][m[1]] = true
			}
		}
		return out
	}
	documented := flagsOf(blocks[0].text)
	usageFlags := flagsOf(usage)
	for cmd, flags := range documented {
		for f := range flags {
			if !usageFlags[cmd][f] {
				t.Errorf("docs/configuration.md documents `mcphost %s %s`; the usage text does not list it", cmd, f)
			}
		}
	}
	for _, f := range []string{"-config", "-json", "-v", "-as", "-daemon", "-local"} {
		if !strings.Contains(usage, "Client flags: ") || !strings.Contains(usage[strings.Index(usage, "Client flags: "):], f) {
			t.Errorf("the usage's client flags lack %s", f)
		}
		if !strings.Contains(md, "Client flags: `[-config FILE] [-json] [-v] [-as NAME] [-daemon URL | -local]`") {
			t.Errorf("the client flags of docs/configuration.md are not the usage's")
		}
	}
}
