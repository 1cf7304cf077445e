package importcfg

// Writing the imported servers as HCL with hclwrite, and checking the
// result with mcphost's own loader.

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
	"github.com/mcphost/mcphost/host/config"
	"github.com/zclconf/go-cty/cty"
)

// renderImport writes the servers as one formatted HCL file.
func renderImport(files []*importFile, servers []*importServer) []byte {
	f := hclwrite.NewEmptyFile()
	body := f.Body()
	header := []string{"Written by `mcphost import` from:"}
	for _, file := range files {
		header = append(header, fmt.Sprintf("  %s (%s)", commentText(file.Display), file.Format.Title))
	}
	header = append(header,
		"Values of env maps and secret-looking headers are not copied: they are",
		"read with env() when mcphost starts. Each server lists the variables",
		"to set. Review every command before you run it.")
	body.AppendUnstructuredTokens(commentTokens(header))
	for _, s := range servers {
		body.AppendNewline()
		body.AppendUnstructuredTokens(commentTokens(s.comment()))
		b := body.AppendNewBlock("server", []string{s.Name}).Body()
		if s.Remote {
			b.SetAttributeRaw("url", s.URL.tokens())
			if s.SSE {
				b.SetAttributeValue("transport", cty.StringVal(config.TransportSSE))
			}
			if len(s.Headers) > 0 {
				b.SetAttributeRaw("headers", objectTokens(s.Headers))
			}
		} else {
			b.SetAttributeRaw("command", s.Command.tokens())
			if len(s.Args) > 0 {
				elems := make([]hclwrite.Tokens, len(s.Args))
				for i, a := range s.Args {
					elems[i] = a.tokens()
				}
				b.SetAttributeRaw("args", hclwrite.TokensForTuple(elems))
			}
			if len(s.Env) > 0 {
				b.SetAttributeRaw("env", objectTokens(s.Env))
			}
			if s.Cwd != "" {
				b.SetAttributeValue("cwd", cty.StringVal(s.Cwd))
			}
		}
		if s.CallTimeout > 0 {
			b.SetAttributeValue("call_timeout", cty.StringVal(durationAttr(s.CallTimeout)))
		}
		if s.Disabled {
			b.SetAttributeValue("enabled", cty.False)
		}
	}
	return hclwrite.Format(f.Bytes())
}

// comment is what the block's comment says: where it came from and the
// variables to set.
func (s *importServer) comment() []string {
	e := s.Entry
	lines := []string{fmt.Sprintf("From %s (%s): %s", commentText(e.File.Display), e.File.Format.Title, commentText(e.Where))}
	if len(s.Needs) == 0 {
		return lines
	}
	lines = append(lines, "Set before starting mcphost:")
	width := 0
	for _, n := range s.Needs {
		width = max(width, utf8.RuneCountInString(commentText(n.Name)))
	}
	for _, n := range s.Needs {
		why := n.Why
		if n.Optional {
			why += " (optional: it has a default)"
		}
		name := commentText(n.Name)
		lines = append(lines, fmt.Sprintf("  %s%s  %s", name, strings.Repeat(" ", width-utf8.RuneCountInString(name)), commentText(why)))
	}
	return lines
}

// commentText makes text from a file safe in a # comment: no line breaks,
// no control or format characters, valid UTF-8.
func commentText(s string) string {
	safe := utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool {
		return !unicode.IsPrint(r) && r != ' '
	})
	if safe {
		return s
	}
	q := strconv.Quote(s)
	return q[1 : len(q)-1]
}

func commentTokens(lines []string) hclwrite.Tokens {
	var toks hclwrite.Tokens
	for _, l := range lines {
		text := "#"
		if l != "" {
			text += " " + strings.TrimRight(l, " ")
		}
		toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenComment, Bytes: []byte(text + "\n")})
	}
	return toks
}

// durationAttr writes d as config reads it: "30s", "1500ms".
func durationAttr(d time.Duration) string {
	if d%time.Second == 0 {
		return fmt.Sprintf("%ds", d/time.Second)
	}
	return fmt.Sprintf("%dms", d/time.Millisecond)
}

// hclKeyRE is a key that may stand bare in an object: an identifier that
// HCL does not read as a keyword.
var hclKeyRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

func objectTokens(kvs []hclKV) hclwrite.Tokens {
	attrs := make([]hclwrite.ObjectAttrTokens, len(kvs))
	for i, kv := range kvs {
		name := hclwrite.TokensForValue(cty.StringVal(kv.Key))
		if hclKeyRE.MatchString(kv.Key) && !slices.Contains([]string{"true", "false", "null", "for", "if", "in"}, kv.Key) {
			name = hclwrite.TokensForIdentifier(kv.Key)
		}
		attrs[i] = hclwrite.ObjectAttrTokens{Name: name, Value: kv.Value.tokens()}
	}
	return hclwrite.TokensForObject(attrs)
}

// tokens writes a value: a plain string, a lone env() call, or a quoted
// template with ${env(...)} in it.
func (t tmpl) tokens() hclwrite.Tokens {
	if len(t) == 1 && t[0].Ref != nil {
		return t[0].Ref.tokens()
	}
	if !t.hasRefs() {
		return hclwrite.TokensForValue(cty.StringVal(t.literal()))
	}
	toks := hclwrite.Tokens{{Type: hclsyntax.TokenOQuote, Bytes: []byte(`"`)}}
	interp := func(inner hclwrite.Tokens) {
		toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenTemplateInterp, Bytes: []byte("${")})
		toks = append(toks, inner...)
		toks = append(toks, &hclwrite.Token{Type: hclsyntax.TokenTemplateSeqEnd, Bytes: []byte("}")})
	}
	for i, p := range t {
		if p.Ref != nil {
			interp(p.Ref.tokens())
			continue
		}
		lit := p.Lit
		// A literal "$" just before ${ would make it the escape $${: it
		// goes in an interpolation of its own.
		var dollars string
		if i+1 < len(t) {
			trimmed := strings.TrimRight(lit, "$")
			lit, dollars = trimmed, lit[len(trimmed):]
		}
		if lit != "" {
			toks = append(toks, hclwrite.TokensForValue(cty.StringVal(lit))[1])
		}
		if dollars != "" {
			interp(hclwrite.TokensForValue(cty.StringVal(dollars)))
		}
	}
	return append(toks, &hclwrite.Token{Type: hclsyntax.TokenCQuote, Bytes: []byte(`"`)})
}

func (r *envRef) tokens() hclwrite.Tokens {
	args := []hclwrite.Tokens{hclwrite.TokensForValue(cty.StringVal(r.Name))}
	if r.Default != nil {
		args = append(args, hclwrite.TokensForValue(cty.StringVal(*r.Default)))
	}
	return hclwrite.TokensForFunctionCall("env", args...)
}

// Validate loads the output the way mcphost will, with every
// variable it reads set to a stand-in, so that the check is of the file
// and not of this environment. Errors here are bugs of import.
func Validate(src []byte, filename string) (*config.Config, hcl.Diagnostics) {
	lookup := func(name string) (string, bool) {
		switch name {
		case "XDG_STATE_HOME":
			return "", false
		case "HOME":
			return "/home/placeholder", true
		}
		return urlPlaceholder, true
	}
	return config.Parse(src, filename, config.Options{LookupEnv: lookup, Executable: "mcphost", BaseDir: "/"})
}
