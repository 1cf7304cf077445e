package importcfg

// Reading Codex's config.toml.

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"

	"github.com/BurntSushi/toml"
)

// parseCodex reads the [mcp_servers.NAME] tables of Codex's config.toml;
// the rest of the file is Codex's own configuration.
func parseCodex(f *importFile, data []byte) error {
	var doc struct {
		MCPServers map[string]any `toml:"mcp_servers"`
	}
	md, err := toml.Decode(string(data), &doc)
	if err != nil {
		var pe toml.ParseError
		if errors.As(err, &pe) {
			return &importPosError{File: f.Display, Line: pe.Position.Line, Col: pe.Position.Col, Msg: "invalid TOML: " + pe.Message}
		}
		return &importPosError{File: f.Display, Msg: "invalid TOML: " + err.Error()}
	}
	if !md.IsDefined("mcp_servers") {
		f.warn(nil, "", "no [mcp_servers] tables, so no servers")
		return nil
	}
	// The order of the file, from the keys as they were defined.
	var names []string
	fieldOrder := map[string][]string{}
	for _, k := range md.Keys() {
		if len(k) < 2 || k[0] != "mcp_servers" {
			continue
		}
		if !slices.Contains(names, k[1]) {
			names = append(names, k[1])
		}
		if len(k) == 3 && !slices.Contains(fieldOrder[k[1]], k[2]) {
			fieldOrder[k[1]] = append(fieldOrder[k[1]], k[2])
		}
	}
	for name := range doc.MCPServers {
		if !slices.Contains(names, name) {
			names = append(names, name) // not reached: every key is in md.Keys
		}
	}
	for _, name := range names {
		raw, present := doc.MCPServers[name]
		if !present {
			continue
		}
		e := &importEntry{File: f, Where: entryWhere("mcp_servers", name), Name: name, Pos: codexTablePos(data, name)}
		table, ok := raw.(map[string]any)
		if !ok {
			f.warn(e, "", "the entry is not a table; skipped")
			continue
		}
		order := fieldOrder[name]
		for k := range table {
			if !slices.Contains(order, k) {
				order = append(order, k)
			}
		}
		var fields []jsonMember
		for _, k := range order {
			v, present := table[k]
			if !present {
				continue
			}
			b, err := json.Marshal(v)
			if err != nil {
				f.warn(e, "", "%s cannot be read: %v; left out", k, err)
				continue
			}
			fields = append(fields, jsonMember{Key: k, Value: b, Off: -1, KeyOff: -1})
		}
		if f.entryFields(e, fields) {
			f.Entries = append(f.Entries, e)
		}
	}
	return nil
}

// codexTablePos finds the [mcp_servers.NAME] header of a server, for
// reports: "LINE:1", or "" when the table is written some other way.
func codexTablePos(data []byte, name string) string {
	q := regexp.QuoteMeta(name)
	re, err := regexp.Compile(`(?m)^[ \t]*\[[ \t]*mcp_servers[ \t]*\.[ \t]*(?:` + q + `|"` + q + `"|'` + q + `')[ \t]*\]`)
	if err != nil {
		return ""
	}
	loc := re.FindIndex(data)
	if loc == nil {
		return ""
	}
	return fmt.Sprintf("%d:1", bytes.Count(data[:loc[0]], []byte("\n"))+1)
}
