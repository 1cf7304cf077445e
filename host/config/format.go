package config

import (
	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclwrite"
)

// Format returns src in canonical HCL layout (hclwrite.Format), the output
// of `mcphost fmt`. It parses src first and returns the syntax diagnostics,
// and no output, when src is not valid HCL or nests deeper than
// [MaxNestingDepth]. It does not check the schema.
func Format(src []byte, filename string) ([]byte, hcl.Diagnostics) {
	_, diags := parseConfig(src, filename)
	if diags.HasErrors() {
		SortDiagnostics(diags)
		return nil, diags
	}
	return hclwrite.Format(src), diags
}
