package jsonlex

// MaxDepth is go-sdk's bound on the nesting of a JSON-RPC message
// (internal/json: defaultMaxDepth), which mcphost's own decoders of MCP
// messages keep too: a message nested deeper is refused before decoding,
// so that no decoder recurses that far.
const MaxDepth = 1000

// TooDeep reports whether b nests arrays and objects deeper than max,
// counting outside strings only. It is a scan for the bound, not a check
// of validity: b may still fail to decode.
func TooDeep(b []byte, max int) bool {
	depth, inString, escaped := 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '{' || c == '[':
			if depth++; depth > max {
				return true
			}
		case c == '}' || c == ']':
			depth--
		}
	}
	return false
}
