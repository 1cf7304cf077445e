// Package shellquote writes command lines a POSIX shell reads back as the
// words they were made of, for the commands mcphost prints for a person to
// paste or repeat.
package shellquote

import "strings"

// Quote returns s as one shell word: as it is when it holds only
// characters no shell treats specially, else in single quotes (a single
// quote inside closes the quotes, is escaped, and opens them again).
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_=.,/:@%+", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// Join quotes each word and joins them with spaces.
func Join(words ...string) string {
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = Quote(w)
	}
	return strings.Join(parts, " ")
}
