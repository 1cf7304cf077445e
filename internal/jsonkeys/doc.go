// Package jsonkeys finds the keys of a JSON document's objects that two
// parsers may read differently, so that a caller can refuse the document
// before one parser (a policy) decides on it and another (the server it is
// forwarded to) acts on it.
//
// Two keys of one object clash when they are the same string once decoded
// (`{"path": 1, "p\u0061th": 2}`: encoding/json keeps the last value,
// other parsers the first, some refuse the document), or when they are
// equal under Unicode simple case folding, as [strings.EqualFold] compares
// (`"path"` and `"PATH"`, `"kind"` and `"\u212aind"` with the Kelvin sign):
// encoding/json binds every such key to the one struct field and keeps the
// last. A policy reading the decoded object by exact key sees one value,
// a server that binds its arguments to a Go struct may act on another.
//
// [Scan] validates a document exactly as [encoding/json.Valid] does and
// reports the clashes of every object at any depth, each with the JSON
// Pointer of its object; [Clashes] groups a list of keys the same way for
// callers that hold an already decoded map. Keys are compared as
// encoding/json decodes them: escapes resolved, invalid UTF-8 and lone
// surrogates replaced by U+FFFD (so two keys that differ only there clash).
//
// The package imports only the standard library and keeps no state. It
// never decides whether a clash is acceptable: the caller passes what it
// knows to be distinct (the names a tool's input schema lists), and must
// not forward a document it has not scanned.
package jsonkeys
