package config

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
)

// HashPrefix starts every [Config.Hash].
const HashPrefix = "sha256:"

// Hash identifies the source of the config: the SHA-256 of its files
// (Files), each as its name and its bytes, in name order, written
// "sha256:HEX". The embedded default has one too. It is the text the
// operator wrote, not what it evaluated to: a changed env() value or a
// file() read does not change it. A file that was written again with the
// same bytes keeps its hash.
func (c *Config) Hash() string {
	h := sha256.New()
	for _, name := range slices.Sorted(maps.Keys(c.Files)) {
		var src []byte
		if f := c.Files[name]; f != nil {
			src = f.Bytes
		}
		// Lengths first, so no two lists of files encode alike.
		fmt.Fprintf(h, "%d:%s%d:", len(name), name, len(src))
		h.Write(src)
	}
	return HashPrefix + hex.EncodeToString(h.Sum(nil))
}
