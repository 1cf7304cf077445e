package toolsearch

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Tokens splits text into the words the index knows: at every character
// that is not a letter or digit, and inside words at camelCase and acronym
// boundaries (getUserProfile: get user profile; HTTPServer: http server),
// lower-cased, without stop words and one-letter words, each stemmed.
func Tokens(text string) []string {
	return appendTokens(nil, text, nil)
}

// appendTokens appends the tokens of text to out; memo, when not nil,
// remembers the token of each word seen (an empty one for a dropped word),
// which spares an index build most of the lower-casing and stemming.
func appendTokens(out []string, text string, memo map[string]string) []string {
	forEachWord(text, func(w string) {
		if memo != nil {
			if t, ok := memo[w]; ok {
				if t != "" {
					out = append(out, t)
				}
				return
			}
		}
		t := token(w)
		if memo != nil {
			memo[w] = t
		}
		if t != "" {
			out = append(out, t)
		}
	})
	return out
}

// token is the index's word for w, or "" when w is dropped.
func token(w string) string {
	w = strings.ToLower(w)
	if utf8.RuneCountInString(w) < 2 || stopWords[w] {
		return ""
	}
	return stem(w)
}

// words splits text at non-alphanumerics and case boundaries.
func words(text string) []string {
	var out []string
	forEachWord(text, func(w string) { out = append(out, w) })
	return out
}

// forEachWord calls fn with each word of text, in order: runs of letters
// and digits, split where a lower-case letter or digit meets an upper-case
// one (getUser: get User) and before the last capital of a run of
// capitals that a lower-case letter follows (HTTPServer: HTTP Server).
func forEachWord(text string, fn func(string)) {
	start := -1
	var prev rune
	for i, r := range text {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			if start >= 0 {
				fn(text[start:i])
			}
			start = -1
			continue
		}
		if start < 0 {
			start, prev = i, r
			continue
		}
		switch {
		case (unicode.IsLower(prev) || unicode.IsDigit(prev)) && unicode.IsUpper(r):
			fn(text[start:i])
			start = i
		case unicode.IsUpper(prev) && unicode.IsUpper(r):
			if next, _ := utf8.DecodeRuneInString(text[i+utf8.RuneLen(r):]); unicode.IsLower(next) {
				fn(text[start:i])
				start = i
			}
		}
		prev = r
	}
	if start >= 0 {
		fn(text[start:])
	}
}

// stopWords are words that say nothing about which tool is meant.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could do does for from
		had has have how i if in into is it its me my of on or our please should so some
		than that the their them then there these this those to use using want was we were
		what when where which while who will with would you your tool tools`) {
		m[w] = true
	}
	return m
}()

// stem strips the common English inflections, lightly: enough that
// "files", "listing", "created" and "deletes" meet "file", "list",
// "create" and "delete". A final e goes too, so that "create" and
// "created" both become "creat".
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		w = w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		w = undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		w = undouble(w[:n-2])
	case n > 4 && (strings.HasSuffix(w, "sses") || strings.HasSuffix(w, "xes") || strings.HasSuffix(w, "ches") || strings.HasSuffix(w, "shes")):
		w = w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		w = w[:n-1]
	}
	if len(w) > 3 && strings.HasSuffix(w, "e") {
		w = w[:len(w)-1]
	}
	return w
}

// undouble turns "runn" (from "running") back into "run"; it looks at
// ASCII only, so that it never cuts a multi-byte character in two.
func undouble(w string) string {
	n := len(w)
	if n >= 3 && w[n-1] == w[n-2] && w[n-1] < utf8.RuneSelf && !strings.ContainsRune("lsz", rune(w[n-1])) {
		return w[:n-1]
	}
	return w
}
