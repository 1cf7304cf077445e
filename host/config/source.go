package config

import (
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
)

// MaxConfigSize is the largest configuration file mcphost reads (4 MiB):
// real ones are a few kilobytes, and a config named by mistake (a log, a
// disk image, /dev/zero) must not exhaust the memory of `validate` or of a
// daemon reloading on SIGHUP.
const MaxConfigSize = 4 << 20

// readConfigSource reads a configuration file through open, refusing
// directories and devices and anything over MaxConfigSize. A pipe is read
// (`mcphost validate <(generate)`), bounded like a file.
func readConfigSource(stat func() (fs.FileInfo, error), open func() (io.ReadCloser, error)) ([]byte, error) {
	info, err := stat()
	if err != nil {
		return nil, err
	}
	switch m := info.Mode(); {
	case m.IsDir():
		return nil, fmt.Errorf("it is a directory")
	case m&(fs.ModeDevice|fs.ModeCharDevice|fs.ModeSocket) != 0:
		return nil, fmt.Errorf("it is %s, not a file", fileKind(m))
	case m.IsRegular() && info.Size() > MaxConfigSize:
		return nil, fmt.Errorf("it has %d bytes, more than the %d bytes a configuration may have", info.Size(), MaxConfigSize)
	}
	f, err := open()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	src, err := io.ReadAll(io.LimitReader(f, MaxConfigSize+1))
	if err != nil {
		return nil, err
	}
	if len(src) > MaxConfigSize {
		return nil, fmt.Errorf("it has more than the %d bytes a configuration may have", MaxConfigSize)
	}
	return src, nil
}

func readFSConfig(fsys fs.FS, name string) ([]byte, error) {
	return readConfigSource(func() (fs.FileInfo, error) { return fs.Stat(fsys, name) },
		func() (io.ReadCloser, error) { return fsys.Open(name) })
}

func readOSConfig(path string) ([]byte, error) {
	return readConfigSource(func() (fs.FileInfo, error) { return os.Stat(path) },
		func() (io.ReadCloser, error) { return os.Open(path) })
}

// refuseForExpressions reports every `for` expression and `%{for}`
// directive of body. A configuration has no variables, so they can only
// repeat literals, and nested ones multiply: six levels over ten elements
// took seconds to evaluate and eight exhausted the memory of a reload.
func refuseForExpressions(body hcl.Body) hcl.Diagnostics {
	b, ok := body.(*hclsyntax.Body)
	if !ok {
		return nil
	}
	var diags hcl.Diagnostics
	_ = hclsyntax.VisitAll(b, func(n hclsyntax.Node) hcl.Diagnostics {
		// A %{for} directive parses as a ForExpr inside a TemplateJoinExpr.
		e, ok := n.(*hclsyntax.ForExpr)
		if !ok {
			return nil
		}
		rng := e.SrcRange
		diags = append(diags, &hcl.Diagnostic{
			Severity: hcl.DiagError,
			Summary:  "For expressions are not supported",
			Detail:   "mcphost configurations have no variables, so a for expression (or a %{for} directive) can only repeat what is written in it, and nested ones multiply without bound. Write the list, object or text out instead.",
			Subject:  rng.Ptr(),
		})
		return nil
	})
	return diags
}
