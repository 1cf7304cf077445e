// Package jsonlex reads the tokens of JSON text (RFC 8259) the way
// encoding/json accepts them, without building values: the lexer under
// the scanners that must agree with encoding/json on what is valid (the
// policies' lazy arguments, the argument key check of internal/jsonkeys).
//
// It also bounds the nesting of a message (TooDeep), as go-sdk does.
//
// It imports nothing of mcphost's. It must never accept what
// encoding/json refuses.
package jsonlex
