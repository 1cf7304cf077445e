package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/mcphost/mcphost/host"
	"github.com/mcphost/mcphost/internal/termsafe"
	"golang.org/x/term"
)

// maxPromptTries is how often `mcphost call` asks again for an answer that
// does not fit the question before it declines.
const maxPromptTries = 3

// errNoTerminal declines a question when nobody can answer it.
var errNoTerminal = errors.New("stdin is not a terminal, so mcphost call cannot ask (run it in a terminal, or call the tool from the WebShell)")

// elicitFunc is the Elicit of `mcphost call`: with a terminal on stdin the
// user is asked there (the prompts go to stderr, so stdout keeps only the
// result); without one every question is declined, and stderr says so.
func (e *env) elicitFunc(stdinUsed bool) func(context.Context, host.Elicitation) (host.ElicitationAnswer, error) {
	f, ok := e.stdin.(*os.File)
	if !ok || stdinUsed || !term.IsTerminal(int(f.Fd())) {
		return func(_ context.Context, q host.Elicitation) (host.ElicitationAnswer, error) {
			fmt.Fprintf(e.stderr, "mcphost call: %s asks: %s\n", termsafe.Line(q.Server), termsafe.Line(q.Message))
			fmt.Fprintf(e.stderr, "mcphost call: declined: %v\n", errNoTerminal)
			return host.ElicitationAnswer{}, errNoTerminal
		}
	}
	p := &prompter{in: bufio.NewReader(f), out: e.stderr, secret: func() (string, error) {
		b, err := term.ReadPassword(int(f.Fd()))
		fmt.Fprintln(e.stderr)
		return string(b), err
	}}
	return func(_ context.Context, q host.Elicitation) (host.ElicitationAnswer, error) {
		return p.ask(q)
	}
}

// prompter asks questions on a terminal: lines from in, prompts to out,
// secret fields read without echo.
type prompter struct {
	in     *bufio.Reader
	out    io.Writer
	secret func() (string, error)
}

// promptProp is what the prompter reads of one property of a requested
// schema.
type promptProp struct {
	Type        string   `json:"type"`
	Title       string   `json:"title"`
	Description string   `json:"description"`
	Format      string   `json:"format"`
	WriteOnly   bool     `json:"writeOnly"`
	Enum        []any    `json:"enum"`
	Default     any      `json:"default"`
	OneOf       []choice `json:"oneOf"`
	Items       *struct {
		Enum  []any    `json:"enum"`
		AnyOf []choice `json:"anyOf"`
		OneOf []choice `json:"oneOf"`
	} `json:"items"`
}

type choice struct {
	Const any    `json:"const"`
	Title string `json:"title"`
}

// ask asks one question and returns the answer.
func (p *prompter) ask(q host.Elicitation) (host.ElicitationAnswer, error) {
	fmt.Fprintf(p.out, "\n%s.%s asks: %s\n", termsafe.Line(q.Server), termsafe.Line(q.Tool), termsafe.Text(q.Message))
	if q.Mode == host.ElicitURL {
		fmt.Fprintf(p.out, "It asks you to open this URL (mcphost does not open it for you):\n  %s\n", termsafe.Line(q.URL))
		action, err := p.action("Open it yourself; then [a]ccept, [d]ecline or [c]ancel? ")
		return host.ElicitationAnswer{Action: action}, err
	}
	var schema struct {
		Properties map[string]promptProp `json:"properties"`
		Required   []string              `json:"required"`
	}
	if err := json.Unmarshal(q.RequestedSchema, &schema); err != nil {
		return host.ElicitationAnswer{}, fmt.Errorf("reading the requested schema: %w", err)
	}
	names := make([]string, 0, len(schema.Properties))
	for n := range schema.Properties {
		names = append(names, n)
	}
	sort.Strings(names)
	for try := 1; ; try++ {
		content := map[string]any{}
		for _, name := range names {
			v, set, err := p.field(name, schema.Properties[name], slices.Contains(schema.Required, name), q.SecretField(name))
			if err != nil {
				return host.ElicitationAnswer{}, err
			}
			if set {
				content[name] = v
			}
		}
		action, err := p.action("Send this answer? [a]ccept, [d]ecline or [c]ancel: ")
		if err != nil || action != host.ElicitAccept {
			return host.ElicitationAnswer{Action: action}, err
		}
		ans := host.ElicitationAnswer{Action: host.ElicitAccept, Content: content}
		err = q.Check(ans)
		if err == nil {
			return ans, nil
		}
		if try >= maxPromptTries {
			return host.ElicitationAnswer{}, fmt.Errorf("no answer that fits after %d tries: %w", try, err)
		}
		fmt.Fprintf(p.out, "%s; please answer again.\n", termsafe.Line(err.Error()))
	}
}

// field reads one property; set is false when the user left it empty and
// it has no default.
func (p *prompter) field(name string, prop promptProp, required, secret bool) (any, bool, error) {
	label := name
	if prop.Title != "" {
		label = prop.Title + " (" + name + ")"
	}
	var hints []string
	if required {
		hints = append(hints, "required")
	}
	opts := options(prop)
	if len(opts) > 0 {
		hints = append(hints, "one of: "+strings.Join(opts, ", "))
		if prop.Type == "array" {
			hints[len(hints)-1] = "any of, comma-separated: " + strings.Join(opts, ", ")
		}
	} else if prop.Type != "" && prop.Type != "string" {
		hints = append(hints, prop.Type)
	}
	if prop.Format != "" && prop.Format != "password" {
		hints = append(hints, prop.Format)
	}
	if prop.Default != nil && !secret {
		hints = append(hints, fmt.Sprintf("default %v", prop.Default))
	}
	if prop.Description != "" {
		fmt.Fprintf(p.out, "  %s\n", termsafe.Line(prop.Description))
	}
	prompt := "  " + termsafe.Line(label)
	if len(hints) > 0 {
		prompt += " [" + termsafe.Line(strings.Join(hints, "; ")) + "]"
	}
	fmt.Fprint(p.out, prompt+": ")
	var (
		line string
		err  error
	)
	if secret {
		line, err = p.secret()
	} else {
		line, err = p.line()
	}
	if err != nil {
		return nil, false, err
	}
	if line == "" {
		if prop.Default != nil {
			return prop.Default, true, nil
		}
		return nil, false, nil
	}
	switch prop.Type {
	case "integer":
		if n, err := strconv.ParseInt(line, 10, 64); err == nil {
			return n, true, nil
		}
	case "number":
		if f, err := strconv.ParseFloat(line, 64); err == nil {
			return f, true, nil
		}
	case "boolean":
		switch strings.ToLower(line) {
		case "y", "yes", "true":
			return true, true, nil
		case "n", "no", "false":
			return false, true, nil
		}
	case "array":
		var out []any
		for _, part := range strings.Split(line, ",") {
			if part = strings.TrimSpace(part); part != "" {
				out = append(out, part)
			}
		}
		return out, true, nil
	}
	// Anything else goes as a string; the schema check says what is wrong.
	return line, true, nil
}

// options lists an enum's values.
func options(prop promptProp) []string {
	var out []string
	add := func(vals []any, choices []choice) {
		for _, v := range vals {
			out = append(out, fmt.Sprint(v))
		}
		for _, c := range choices {
			out = append(out, fmt.Sprint(c.Const))
		}
	}
	add(prop.Enum, prop.OneOf)
	if prop.Items != nil {
		add(prop.Items.Enum, append(prop.Items.AnyOf, prop.Items.OneOf...))
	}
	return out
}

// action reads accept, decline or cancel (by initial); end of input is a
// cancel.
func (p *prompter) action(prompt string) (string, error) {
	for {
		fmt.Fprint(p.out, prompt)
		line, err := p.line()
		if errors.Is(err, io.EOF) {
			return host.ElicitCancel, nil
		}
		if err != nil {
			return "", err
		}
		switch strings.ToLower(line) {
		case "a", "accept", "y", "yes":
			return host.ElicitAccept, nil
		case "d", "decline", "n", "no":
			return host.ElicitDecline, nil
		case "c", "cancel":
			return host.ElicitCancel, nil
		}
	}
}

// line reads one line without its line ending; a last line without one
// counts, end of input before any is io.EOF.
func (p *prompter) line() (string, error) {
	s, err := p.in.ReadString('\n')
	if err != nil && (s == "" || !errors.Is(err, io.EOF)) {
		return "", err
	}
	return strings.TrimSpace(s), nil
}
