package main

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
)

// table writes aligned columns; call row for each line, then flush.
type table struct{ w *tabwriter.Writer }

// newTable starts a table on out with the header row.
func newTable(out io.Writer, header ...string) *table {
	t := &table{w: tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)}
	t.row(header...)
	return t
}

// row adds a line; an empty cell prints as "-".
func (t *table) row(cells ...string) {
	for i, c := range cells {
		cells[i] = oneLine(c)
		if cells[i] == "" {
			cells[i] = "-"
		}
	}
	fmt.Fprintln(t.w, strings.Join(cells, "\t"))
}

// flush writes the aligned table out.
func (t *table) flush() { _ = t.w.Flush() }

// oneLine keeps a cell (or an error message) on one line without tabs.
func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// truncate shortens s to n runes, marking the cut with "…".
func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
