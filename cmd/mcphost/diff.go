package main

import (
	"fmt"
	"strings"
)

// diffContext is how many unchanged lines a hunk of unifiedDiff shows
// around a change.
const diffContext = 3

// maxDiffLines bounds the lines of each side unifiedDiff compares line by
// line (its table grows with their product); past it, the diff says only
// that the files differ.
const maxDiffLines = 4000

// unifiedDiff returns the differences between a and b as a unified diff
// with the names from and to, or "" when they are equal.
func unifiedDiff(from, to, a, b string) string {
	if a == b {
		return ""
	}
	x, y := splitLines(a), splitLines(b)
	header := fmt.Sprintf("--- %s\n+++ %s\n", from, to)
	if len(x) > maxDiffLines || len(y) > maxDiffLines {
		return header + fmt.Sprintf("@@ the files differ (more than %d lines: not compared line by line) @@\n", maxDiffLines)
	}
	ops := diffOps(x, y)
	var out strings.Builder
	out.WriteString(header)
	for i := 0; i < len(ops); {
		if ops[i].kind == ' ' {
			i++
			continue
		}
		// A hunk: the change at i with its context, merged with the next
		// changes whose context touches it.
		start := max(0, i-diffContext)
		end := i
		for end < len(ops) {
			if ops[end].kind != ' ' {
				end++
				continue
			}
			next := end
			for next < len(ops) && ops[next].kind == ' ' {
				next++
			}
			if next == len(ops) || next-end > 2*diffContext {
				end = min(len(ops), end+diffContext)
				break
			}
			end = next
		}
		ax, bx, an, bn := ops[start].ax, ops[start].bx, 0, 0
		var body strings.Builder
		for _, op := range ops[start:end] {
			body.WriteByte(op.kind)
			body.WriteString(op.line)
			body.WriteByte('\n')
			if op.kind != '+' {
				an++
			}
			if op.kind != '-' {
				bn++
			}
		}
		fmt.Fprintf(&out, "@@ -%s +%s @@\n", hunkRange(ax, an), hunkRange(bx, bn))
		out.WriteString(body.String())
		i = end
	}
	return out.String()
}

// diffOp is one line of a diff: kept (' '), removed ('-') or added ('+'),
// with where it stands in a (ax) and in b (bx).
type diffOp struct {
	kind   byte
	line   string
	ax, bx int
}

// diffOps aligns x and y by their longest common subsequence.
func diffOps(x, y []string) []diffOp {
	n, m := len(x), len(y)
	lcs := make([][]int32, n+1)
	for i := range lcs {
		lcs[i] = make([]int32, m+1)
	}
	for i := n - 1; i >= 0; i-- {
		for j := m - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var ops []diffOp
	i, j := 0, 0
	for i < n || j < m {
		switch {
		case i < n && j < m && x[i] == y[j]:
			ops = append(ops, diffOp{' ', x[i], i, j})
			i++
			j++
		case i < n && (j == m || lcs[i+1][j] >= lcs[i][j+1]):
			ops = append(ops, diffOp{'-', x[i], i, j})
			i++
		default:
			ops = append(ops, diffOp{'+', y[j], i, j})
			j++
		}
	}
	return ops
}

// hunkRange is a hunk header's range: the first line (1-based; the line
// before for an empty range) and the count.
func hunkRange(start, count int) string {
	if count == 0 {
		return fmt.Sprintf("%d,0", start)
	}
	if count == 1 {
		return fmt.Sprintf("%d", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, count)
}

func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
