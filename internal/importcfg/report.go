package importcfg

// What import has to tell the user, gathered while it reads and converts.

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/mcphost/mcphost/internal/termsafe"
)

// importReport collects what import has to tell the user: per file,
// in the order of the files, and by position within each. Every line
// passes through termsafe: the files are not trusted.
type importReport struct {
	files []*importFile
	notes []importNote
}

type importNote struct {
	file      int
	line, col int // 0 for the file as a whole or an unknown place
	seq       int
	text      string
}

func (r *importReport) add(f *importFile, pos, text string) {
	i := slices.Index(r.files, f)
	if i < 0 {
		i = len(r.files)
		r.files = append(r.files, f)
	}
	n := importNote{file: i, seq: len(r.notes), text: termsafe.Line(text)}
	fmt.Sscanf(pos, "%d:%d", &n.line, &n.col)
	r.notes = append(r.notes, n)
}

// lines returns the notes in order and forgets them.
func (r *importReport) lines() []string {
	slices.SortStableFunc(r.notes, func(a, b importNote) int {
		return cmp.Or(cmp.Compare(a.file, b.file), cmp.Compare(a.line, b.line), cmp.Compare(a.col, b.col), cmp.Compare(a.seq, b.seq))
	})
	var out []string
	for _, n := range r.notes {
		out = append(out, n.text)
	}
	r.notes = nil
	return out
}
