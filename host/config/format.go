package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Format returns src in canonical HCL layout (hclwrite.Format), the output
// of `mcphost fmt`. It parses src first and returns the syntax diagnostics,
// and no output, when src is not valid HCL. It does not check the schema.
func Format(src []byte, filename string) ([]byte, hcl.Diagnostics) {
	_, diags := hclsyntax.ParseConfig(src, filename, hcl.InitialPos)
	if diags.HasErrors() {
		SortDiagnostics(diags)
		return nil, diags
	}
	return hclwrite.Format(src), diags
}
