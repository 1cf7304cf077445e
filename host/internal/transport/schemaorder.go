package transport

// Tool schemas in the order the server wrote them.
//
// go-sdk v1.8.0 decodes a listed tool's inputSchema into a map[string]any
// (mcp.Tool.InputSchema: "From the client, this field will hold the default
// JSON marshaling of the server's input schema"), and encoding/json writes
// a map with its keys sorted. The order of "properties", which servers
// choose for people (name before entityType), would then reach the
// WebShell's forms, `mcphost tools` and the gateway's clients alphabetical.
//
// So the transports note the raw bytes of each tools/list answer as they
// read it, below go-sdk (answerGuard for stdio, SSE and in-process
// sessions; AnswerCheck for Streamable HTTP), and the catalog asks for the
// raw form of each decoded schema with OrderedSchema. The key is the
// decoded schema's canonical encoding, so a raw form is only ever used for
// a schema it decodes to: a stale or foreign note cannot change a schema's
// meaning, only the order of its keys.

import (
	"bytes"
	"encoding/json"
	"sync"
)

// maxOrderedSchemas bounds the schemas remembered; past it the memory
// starts again (a server that lists more tools than this only loses the
// order of some, never a schema).
const maxOrderedSchemas = 8192

// maxOrderedBytes bounds the bytes of the remembered schemas likewise.
const maxOrderedBytes = 32 << 20

var ordered = struct {
	sync.Mutex
	raw   map[string]json.RawMessage // canonical encoding -> as the server wrote it
	bytes int
}{raw: map[string]json.RawMessage{}}

// NoteToolsAnswer reads one JSON-RPC message (or, with result set, only a
// response's result) and, when it lists tools whose input schemas' keys
// are not in sorted order, remembers those schemas as written.
func NoteToolsAnswer(data []byte, result bool) {
	if !bytes.Contains(data, []byte(`"inputSchema"`)) || !bytes.Contains(data, []byte(`"tools"`)) {
		return
	}
	type list struct {
		Tools []struct {
			InputSchema json.RawMessage `json:"inputSchema"`
		} `json:"tools"`
	}
	var l list
	if result {
		if json.Unmarshal(data, &l) != nil {
			return
		}
	} else {
		var msg struct {
			Result *list `json:"result"`
		}
		if json.Unmarshal(data, &msg) != nil || msg.Result == nil {
			return
		}
		l = *msg.Result
	}
	for _, t := range l.Tools {
		noteSchema(t.InputSchema)
	}
}

func noteSchema(raw json.RawMessage) {
	if len(raw) == 0 || raw[0] != '{' {
		return
	}
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return
	}
	canon, err := json.Marshal(v)
	if err != nil {
		return
	}
	var compact bytes.Buffer
	if json.Compact(&compact, raw) != nil {
		return
	}
	// A schema already in sorted order needs no note. (One that differs
	// only in escapes, \u003c for <, is noted: harmless.)
	if bytes.Equal(compact.Bytes(), canon) {
		return
	}
	ordered.Lock()
	defer ordered.Unlock()
	if _, ok := ordered.raw[string(canon)]; ok {
		return
	}
	if len(ordered.raw) >= maxOrderedSchemas || ordered.bytes+len(canon)+compact.Len() > maxOrderedBytes {
		clear(ordered.raw)
		ordered.bytes = 0
	}
	ordered.raw[string(canon)] = json.RawMessage(compact.Bytes())
	ordered.bytes += len(canon) + compact.Len()
}

// OrderedSchema returns schema, a decoded input schema, as its server wrote
// it (keys in the server's order), or nil when it was not noted or its
// keys were in sorted order anyway.
func OrderedSchema(schema any) json.RawMessage {
	if schema == nil {
		return nil
	}
	if _, ok := schema.(json.RawMessage); ok {
		return nil
	}
	canon, err := json.Marshal(schema)
	if err != nil {
		return nil
	}
	ordered.Lock()
	defer ordered.Unlock()
	return ordered.raw[string(canon)]
}
