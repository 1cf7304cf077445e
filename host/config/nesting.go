package config

import (
	"fmt"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// MaxNestingDepth bounds how deeply a configuration file may nest. The HCL
// parser, and later the evaluation of what it parsed, recurse once per level,
// so a file of a few hundred kilobytes of "(" would otherwise exhaust the
// goroutine stack, which is a fatal error, not a panic: `mcphost validate`
// would crash, and so would a running daemon on SIGHUP. Real configurations
// nest about ten levels deep.
const MaxNestingDepth = 256

// parseConfig parses src as a native-syntax HCL file, after checking with
// checkTokens that it has at most MaxConfigTokens tokens and with
// checkNesting that the parser cannot recurse deeper than MaxNestingDepth.
// When a check fails the file is not parsed: the result has the source
// (so the diagnostic can be rendered with a snippet) and an empty body.
func parseConfig(src []byte, filename string) (*hcl.File, hcl.Diagnostics) {
	if d := checkTokens(src, filename); d != nil {
		return &hcl.File{Body: hcl.EmptyBody(), Bytes: src}, hcl.Diagnostics{d}
	}
	if d := checkNesting(src, filename); d != nil {
		return &hcl.File{Body: hcl.EmptyBody(), Bytes: src}, hcl.Diagnostics{d}
	}
	return hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
}

// nestFrame is one open bracket, string or template sequence in checkNesting.
type nestFrame struct {
	open       hclsyntax.TokenType
	newlines   bool // a newline ends the current item (block bodies, object constructors)
	items      int  // operators and chained indexes of the current item
	directives int  // open %{if} and %{for} directives of a string or heredoc
}

// checkNesting returns a "Nesting too deep" diagnostic at the first token
// where the nesting of src exceeds MaxNestingDepth, or nil.
//
// It runs HCL's own scanner, which is a state machine with an explicit stack
// and does not recurse, so it sees strings, heredocs, comments and template
// sequences exactly as the parser will. The depth it counts is an upper
// bound of the depth of the parser's recursion and of the syntax tree, up to
// a small constant factor:
//
//   - each open ( [ { " <<EOT ${ and %{ is one level until it closes;
//   - each %{if} and %{for} is one level until its %{endif} or %{endfor};
//   - within one item (an attribute value, or an element of a tuple,
//     object or argument list), each operator (unary, binary and the ? of a
//     conditional) and each index or splat that follows an operand is one
//     level until the item ends, because `1+1+1` and `x[a][a]` build a tree
//     as deep as they are long, and `!!x`, `a ? b : c ? d : e` and
//     `x[*][*]` make the parser recurse.
//
// An item ends at a comma, and at a newline in a block body or an object
// constructor, where newlines separate items; inside ( [ ${ and {for}
// newlines are only spaces and end nothing. A closing bracket that does not
// match the innermost open one is a syntax error the parser reports; it
// closes nothing here, so the count can only be too high.
func checkNesting(src []byte, filename string) *hcl.Diagnostic {
	tokens, _ := hclsyntax.LexConfig(src, filename, hcl.InitialPos)
	n := nestCounter{stack: []nestFrame{{newlines: true}}} // the file's body
	for i, tok := range tokens {
		if n.step(tok, tokens[i+1:]) && n.depth > MaxNestingDepth {
			return tooDeep(tok)
		}
		if tok.Type != hclsyntax.TokenNewline && tok.Type != hclsyntax.TokenComment {
			n.prev = tok.Type
		}
	}
	return nil
}

// nestCounter is the state of checkNesting: the open frames and the depth
// they add up to.
type nestCounter struct {
	stack []nestFrame
	depth int
	prev  hclsyntax.TokenType // the previous token that is not a newline or comment
}

// step counts one token; rest are the tokens after it. It reports whether
// the depth grew.
func (n *nestCounter) step(tok hclsyntax.Token, rest hclsyntax.Tokens) (grew bool) {
	top := &n.stack[len(n.stack)-1]
	switch tok.Type {
	case hclsyntax.TokenOBrack, hclsyntax.TokenOParen, hclsyntax.TokenOBrace,
		hclsyntax.TokenOQuote, hclsyntax.TokenOHeredoc,
		hclsyntax.TokenTemplateInterp, hclsyntax.TokenTemplateControl:
		n.open(tok.Type, rest)
		return true
	case hclsyntax.TokenCBrack, hclsyntax.TokenCParen, hclsyntax.TokenCBrace,
		hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc, hclsyntax.TokenTemplateSeqEnd:
		n.close(tok.Type)
	case hclsyntax.TokenPlus, hclsyntax.TokenMinus, hclsyntax.TokenStar,
		hclsyntax.TokenSlash, hclsyntax.TokenPercent,
		hclsyntax.TokenEqualOp, hclsyntax.TokenNotEqual,
		hclsyntax.TokenLessThan, hclsyntax.TokenLessThanEq,
		hclsyntax.TokenGreaterThan, hclsyntax.TokenGreaterThanEq,
		hclsyntax.TokenAnd, hclsyntax.TokenOr, hclsyntax.TokenBang,
		hclsyntax.TokenQuestion:
		top.items++
		n.depth++
		return true
	case hclsyntax.TokenIdent:
		return n.directive(tok)
	case hclsyntax.TokenComma:
		n.endItem()
	case hclsyntax.TokenNewline, hclsyntax.TokenComment:
		// A line comment ends with its newline, and the parser takes it
		// for one.
		if top.newlines && isNewline(tok) {
			n.endItem()
		}
	}
	return false
}

// open pushes a frame for an opening token of type t; rest are the tokens
// after it.
func (n *nestCounter) open(t hclsyntax.TokenType, rest hclsyntax.Tokens) {
	if t == hclsyntax.TokenOBrack && endsOperand(n.prev) {
		n.stack[len(n.stack)-1].items++ // x[i]: one more link of the chain x belongs to
		n.depth++
	}
	f := nestFrame{open: t}
	if t == hclsyntax.TokenOBrace {
		// A block body or an object constructor, unless it is a
		// {for ...} expression, where newlines are spaces.
		f.newlines = !opensFor(rest)
	}
	n.stack = append(n.stack, f)
	n.depth++
}

// close pops the innermost frame when a closing token of type t matches
// it, with the levels its items and directives added.
func (n *nestCounter) close(t hclsyntax.TokenType) {
	top := n.stack[len(n.stack)-1]
	if len(n.stack) > 1 && closes(top.open, t) {
		n.depth -= 1 + top.items + top.directives
		n.stack = n.stack[:len(n.stack)-1]
	}
}

// directive counts the identifier tok when it is the keyword of a
// template directive: %{if ...} and %{for ...} open a level of the string
// around them until %{endif} or %{endfor}. It reports whether the depth
// grew.
func (n *nestCounter) directive(tok hclsyntax.Token) bool {
	top := n.stack[len(n.stack)-1]
	if top.open != hclsyntax.TokenTemplateControl || n.prev != hclsyntax.TokenTemplateControl || len(n.stack) <= 2 {
		return false
	}
	str := &n.stack[len(n.stack)-2]
	switch string(tok.Bytes) {
	case "if", "for":
		str.directives++
		n.depth++
		return true
	case "endif", "endfor":
		if str.directives > 0 {
			str.directives--
			n.depth--
		}
	}
	return false
}

// endItem ends the current item of the innermost frame, and the levels its
// operators and indexes added.
func (n *nestCounter) endItem() {
	top := &n.stack[len(n.stack)-1]
	n.depth -= top.items
	top.items = 0
}

// tooDeep is checkNesting's diagnostic at tok.
func tooDeep(tok hclsyntax.Token) *hcl.Diagnostic {
	return &hcl.Diagnostic{
		Severity: hcl.DiagError,
		Summary:  "Nesting too deep",
		Detail: fmt.Sprintf("The configuration nests more than %d levels deep here, the most mcphost reads: the parser would otherwise recurse until it runs out of stack. "+
			"Each open bracket, brace, parenthesis, string, heredoc, ${ or %%{ sequence and %%{if} or %%{for} directive is a level, and so is each operator or index in a chain such as a + b + c or x[a][b]. "+
			"Flatten the expression or the blocks; a real configuration needs about ten levels.", MaxNestingDepth),
		Subject: tok.Range.Ptr(),
	}
}

// endsOperand reports whether a token of type t can end an operand, so that
// a "[" after it is an index rather than a tuple.
func endsOperand(t hclsyntax.TokenType) bool {
	switch t {
	case hclsyntax.TokenIdent, hclsyntax.TokenNumberLit, hclsyntax.TokenStar,
		hclsyntax.TokenCParen, hclsyntax.TokenCBrack, hclsyntax.TokenCBrace,
		hclsyntax.TokenCQuote, hclsyntax.TokenCHeredoc:
		return true
	}
	return false
}

// closes reports whether a closing token of type c ends a frame opened by o.
func closes(o, c hclsyntax.TokenType) bool {
	switch c {
	case hclsyntax.TokenCBrack:
		return o == hclsyntax.TokenOBrack
	case hclsyntax.TokenCParen:
		return o == hclsyntax.TokenOParen
	case hclsyntax.TokenCBrace:
		return o == hclsyntax.TokenOBrace
	case hclsyntax.TokenCQuote:
		return o == hclsyntax.TokenOQuote
	case hclsyntax.TokenCHeredoc:
		return o == hclsyntax.TokenOHeredoc
	case hclsyntax.TokenTemplateSeqEnd:
		return o == hclsyntax.TokenTemplateInterp || o == hclsyntax.TokenTemplateControl
	}
	return false
}

// isNewline reports whether tok ends a line: a newline, or a line comment
// with the newline that ends it.
func isNewline(tok hclsyntax.Token) bool {
	switch tok.Type {
	case hclsyntax.TokenNewline:
		return true
	case hclsyntax.TokenComment:
		return len(tok.Bytes) > 0 && tok.Bytes[len(tok.Bytes)-1] == '\n'
	}
	return false
}

// opensFor reports whether the tokens after a "{" start a {for ...}
// expression, as the parser sees them: comments are skipped, a newline is
// not.
func opensFor(rest hclsyntax.Tokens) bool {
	for _, tok := range rest {
		switch {
		case isNewline(tok):
			return false
		case tok.Type == hclsyntax.TokenComment:
			continue
		}
		return tok.Type == hclsyntax.TokenIdent && string(tok.Bytes) == "for"
	}
	return false
}
