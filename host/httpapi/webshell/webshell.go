package webshell

import (
	"embed"
	"io/fs"
)

//go:embed assets
var assets embed.FS

// Assets returns the WebShell's files (index.html, style.css and the
// JavaScript modules) at the root of the returned file system.
func Assets() fs.FS {
	sub, err := fs.Sub(assets, "assets")
	if err != nil {
		// fs.Sub fails only for an invalid path; "assets" is a constant.
		panic("webshell: " + err.Error())
	}
	return sub
}
