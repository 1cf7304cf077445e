// Package termsafe renders text that came from somewhere untrusted (an MCP
// server's tool names, titles, descriptions, results, error messages, its
// stderr) so that printing it cannot drive the terminal or hide what it
// says. [Line] is for one-line fields, [Text] for multi-line text that keeps
// its newlines and tabs, and [JSON] for an encoded JSON document on its way
// to a terminal.
//
// A rune is unsafe ([Unsafe]) when it is a control character (Unicode
// category Cc: C0, DEL and C1, so ESC, BEL, NUL and CR among them), a format
// character (Cf: the bidi controls U+061C, U+200E, U+200F, U+202A–U+202E and
// U+2066–U+2069, the zero-width U+200B–U+200D, U+FEFF, the tag characters
// U+E0000–U+E007F and the like), or a line or paragraph separator (U+2028,
// U+2029). Unsafe runes are written as visible escapes: \t, \n and \r by
// name, other ASCII controls as \xNN, everything else as \uNNNN or
// \UNNNNNNNN. Each byte of invalid UTF-8 is written as \xNN. Everything else,
// backslashes included, passes through unchanged: text that needs no escape
// comes back as the same string, so an escape in the output may also be
// literal text of the input (the output is for people, not for parsing).
//
// The package sits at the edge where text leaves the process: the CLI
// (cmd/mcphost) calls it at each place it prints what a server supplied, and
// the host escapes the names it reports for tools it rejected. It must never
// decide what text means, truncate or drop it, and it imports only the
// standard library, so any package of the module may use it.
package termsafe
