package cli

import (
	"io"
	"strings"

	"zhizhi/internal/crawl"
)

// table prints rows in aligned columns for a terminal. Site and department
// names are Chinese, and a Chinese character takes two terminal cells, while
// text/tabwriter measures a cell in runes: it would count 清远市 as 3 where
// the terminal shows 6, and no amount of padding makes up for that, because a
// space adds one to both counts. So table pads each cell to the column's
// display width itself.
type table struct {
	header []string
	rows   [][]string
}

func (t *table) add(cells ...string) { t.rows = append(t.rows, cells) }

// write prints the header and the rows, two spaces between columns, no
// trailing spaces.
func (t *table) write(w io.Writer) error {
	all := append([][]string{t.header}, t.rows...)
	var widths []int
	for _, row := range all {
		for i, c := range row {
			if i >= len(widths) {
				widths = append(widths, 0)
			}
			widths[i] = max(widths[i], displayWidth(c))
		}
	}
	var b strings.Builder
	for _, row := range all {
		for i, c := range row {
			b.WriteString(c)
			if i < len(row)-1 {
				b.WriteString(strings.Repeat(" ", widths[i]-displayWidth(c)+2))
			}
		}
		b.WriteString("\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// displayWidth is the number of terminal cells s takes: East Asian wide and
// fullwidth runes (汉字, the fullwidth ｜ of channel paths) take two, every
// other rune one.
func displayWidth(s string) int { return crawl.DisplayWidth(s) }
