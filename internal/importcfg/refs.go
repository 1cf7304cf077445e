package importcfg

// The ${...} references of each format's dialect, translated into env()
// references and literal text.

import (
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
)

var shellRefRE = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(?::-((?s).*))?$`)

// translate turns the ${...} references of a value written in the entry's
// format into env() references and literal text. It reports instead of
// guessing: a reference it cannot translate stays as literal text.
func (c *importConverter) translate(e *importEntry, v string) (t tmpl, needs []envNeed, warns []string) {
	f := e.File
	if f.Format.dialect == dialectLiteral {
		if strings.Contains(v, "${") {
			warns = append(warns, fmt.Sprintf("%s does not expand ${...}; written as it is", f.Format.Title))
		}
		return litTmpl(v), nil, warns
	}
	t = tmpl{}
	for v != "" {
		i := strings.Index(v, "${")
		if i < 0 {
			t = t.lit(v)
			break
		}
		t = t.lit(v[:i])
		end := closingBrace(v, i+2)
		if end < 0 {
			warns = append(warns, fmt.Sprintf("%q has no closing }; written as it is", v[i:]))
			t = t.lit(v[i:])
			break
		}
		whole, inner := v[i:end+1], v[i+2:end]
		v = v[end+1:]
		part, n, w := c.variable(e, inner)
		if w != "" {
			warns = append(warns, fmt.Sprintf("%s %s; written as it is", whole, w))
			t = t.lit(whole)
			continue
		}
		if n != nil {
			needs = append(needs, *n)
		}
		for _, p := range part {
			if p.Ref != nil {
				t = t.ref(p.Ref)
			} else {
				t = t.lit(p.Lit)
			}
		}
	}
	return t, needs, warns
}

// closingBrace returns the index of the } that closes a ${ whose contents
// start at from, or -1.
func closingBrace(s string, from int) int {
	depth := 1
	for k := from; k < len(s); k++ {
		switch s[k] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return k
			}
		}
	}
	return -1
}

// variable translates the inside of one ${...}. A non-empty why says why
// it cannot be.
func (c *importConverter) variable(e *importEntry, inner string) (part tmpl, need *envNeed, why string) {
	f := e.File
	if f.Format.dialect == dialectShell {
		m := shellRefRE.FindStringSubmatch(inner)
		if m == nil {
			return nil, nil, "is not a ${VAR} or ${VAR:-default} reference"
		}
		ref := &envRef{Name: m[1]}
		n := &envNeed{Name: m[1], Why: "referenced as ${" + m[1] + "}"}
		if strings.Contains(inner, ":-") {
			def := m[2]
			ref.Default = &def
			n.Optional = true
			n.Why = "referenced as ${" + m[1] + ":-...}"
		}
		return tmpl{}.ref(ref), n, ""
	}
	name, arg, hasArg := strings.Cut(inner, ":")
	switch {
	case name == "env" && hasArg:
		if arg == "" || strings.ContainsAny(arg, "=\x00") {
			return nil, nil, "does not name a variable"
		}
		return refTmpl(arg), &envNeed{Name: arg, Why: "referenced as ${env:" + arg + "}"}, ""
	case name == "input" && hasArg && f.Format.allows("input"):
		v := inputVar(arg)
		why := fmt.Sprintf("VS Code input %q", arg)
		if in, ok := f.Inputs[arg]; ok {
			if in.Description != "" {
				why += ": " + in.Description
			}
			if in.Password {
				why += " (a password)"
			}
		} else {
			why += ", which the file's inputs do not define"
		}
		return refTmpl(v), &envNeed{Name: v, Why: why, Input: arg}, ""
	case hasArg:
		return nil, nil, "is not translated: mcphost has no such variable"
	case !f.Format.allows(name):
		return nil, nil, "is not translated: mcphost has no such variable"
	case name == "userHome":
		return refTmpl("HOME"), nil, ""
	case name == "workspaceFolder" || name == "workspaceFolderBasename":
		if f.Project == "" {
			return nil, nil, "is not translated: this is a user-level file, so the workspace folder is not known"
		}
		if name == "workspaceFolder" {
			return litTmpl(f.Project), nil, ""
		}
		return litTmpl(filepath.Base(f.Project)), nil, ""
	case name == "pathSeparator" || name == "/":
		return litTmpl(string(filepath.Separator)), nil, ""
	}
	return nil, nil, "is not translated: mcphost has no such variable"
}

// inputVar is the environment variable that stands for VS Code's
// ${input:ID}: ID in upper case, with _ for anything else.
func inputVar(id string) string {
	v := envVarName(id)
	if v == "" || v[0] >= '0' && v[0] <= '9' {
		v = "INPUT_" + v
	}
	return strings.TrimSuffix(v, "_")
}

// envVarName upper-cases s and replaces everything but letters and digits
// with single underscores.
func envVarName(s string) string {
	var b strings.Builder
	last := byte('_')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			c -= 'a' - 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			c = '_'
		}
		if c == '_' && last == '_' {
			continue
		}
		b.WriteByte(c)
		last = c
	}
	return strings.TrimSuffix(b.String(), "_")
}
