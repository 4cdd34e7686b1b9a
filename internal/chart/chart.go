// Package chart draws the dashboard's charts as SVG on the server, so a
// page needs no script and makes no request beyond itself. A chart is a
// row of days (the x axis) with one or more series of non-negative values.
package chart

import (
	"fmt"
	"html/template"
	"math"
	"strings"
)

// Series is one named line or set of bars.
type Series struct {
	Name   string
	Values []float64 // one per label; NaN: no value that day
	Color  string    // a CSS colour; empty picks one
}

// Chart is what to draw.
type Chart struct {
	Title  string
	Labels []string // x axis, e.g. dates
	Series []Series
	Unit   string // shown after the axis' top value, e.g. "次", "KB"
	// Bars draws side-by-side bars instead of lines.
	Bars bool
	// Max fixes the top of the y axis (e.g. 1 for a ratio); 0 fits the data.
	Max float64
}

var palette = []string{"#1f5fa8", "#c0392b", "#2e8b57", "#b8860b", "#6a5acd"}

const (
	width, height       = 640, 240
	left, right, padTop = 56, 12, 28
	bottom              = 44
	plotW, plotH        = width - left - right, height - padTop - bottom
	maxLabels           = 10
	legendX, legendStep = left, 120
)

// SVG renders c. Every text it writes is escaped; the result is safe to
// place in an html/template page.
func SVG(c Chart) template.HTML {
	var b strings.Builder
	esc := template.HTMLEscapeString
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 %d %d" role="img" aria-label="%s" class="chart">`,
		width, height, esc(c.Title))
	fmt.Fprintf(&b, `<title>%s</title>`, esc(c.Title))
	ymax := c.Max
	if ymax <= 0 {
		for _, s := range c.Series {
			for _, v := range s.Values {
				if !math.IsNaN(v) && v > ymax {
					ymax = v
				}
			}
		}
		ymax = niceCeil(ymax)
	}
	// Axes and the ymax value.
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`, left, padTop, left, padTop+plotH)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`, left, padTop+plotH, left+plotW, padTop+plotH)
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="end">%s</text>`, left-4, padTop+4, esc(formatValue(ymax)+c.Unit))
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="11" text-anchor="end">0</text>`, left-4, padTop+plotH+4)
	fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#eee"/>`, left, padTop+plotH/2, left+plotW, padTop+plotH/2)

	n := len(c.Labels)
	if n == 0 || ymax <= 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="13" text-anchor="middle" fill="#666">暂无数据</text>`, left+plotW/2, padTop+plotH/2)
	}
	step := float64(plotW) / float64(max(n, 1))
	x := func(i int) float64 { return float64(left) + step*(float64(i)+0.5) }
	y := func(v float64) float64 {
		if ymax <= 0 {
			return float64(padTop + plotH)
		}
		return float64(padTop) + float64(plotH)*(1-math.Min(v, ymax)/ymax)
	}
	every := max(1, (n+maxLabels-1)/maxLabels)
	for i, l := range c.Labels {
		if i%every != 0 && i != n-1 {
			continue
		}
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" font-size="10" text-anchor="middle">%s</text>`, x(i), padTop+plotH+14, esc(l))
	}
	if n > 0 && ymax > 0 {
		for si, s := range c.Series {
			color := s.Color
			if color == "" {
				color = palette[si%len(palette)]
			}
			if c.Bars {
				bw := step * 0.8 / float64(len(c.Series))
				for i := 0; i < n && i < len(s.Values); i++ {
					v := s.Values[i]
					if math.IsNaN(v) || v <= 0 {
						continue
					}
					bx := x(i) - step*0.4 + bw*float64(si)
					fmt.Fprintf(&b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"><title>%s %s: %s%s</title></rect>`,
						bx, y(v), bw, float64(padTop+plotH)-y(v), esc(color), esc(s.Name), esc(c.Labels[i]), esc(formatValue(v)), esc(c.Unit))
				}
				continue
			}
			var pts []string
			for i := 0; i < n && i < len(s.Values); i++ {
				v := s.Values[i]
				if math.IsNaN(v) {
					if len(pts) > 0 {
						fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, esc(color), strings.Join(pts, " "))
					}
					pts = pts[:0]
					continue
				}
				pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(i), y(v)))
				fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="2.5" fill="%s"><title>%s %s: %s%s</title></circle>`,
					x(i), y(v), esc(color), esc(s.Name), esc(c.Labels[i]), esc(formatValue(v)), esc(c.Unit))
			}
			if len(pts) > 0 {
				fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`, esc(color), strings.Join(pts, " "))
			}
		}
	}
	for si, s := range c.Series {
		color := s.Color
		if color == "" {
			color = palette[si%len(palette)]
		}
		lx := legendX + legendStep*si
		fmt.Fprintf(&b, `<rect x="%d" y="6" width="10" height="10" fill="%s"/>`, lx, esc(color))
		fmt.Fprintf(&b, `<text x="%d" y="15" font-size="11">%s</text>`, lx+14, esc(s.Name))
	}
	b.WriteString(`</svg>`)
	return template.HTML(b.String()) //nolint:gosec // every text above is escaped
}

// niceCeil rounds v up to 1, 2 or 5 times a power of ten.
func niceCeil(v float64) float64 {
	if v <= 0 {
		return 0
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if v <= m*p {
			return m * p
		}
	}
	return 10 * p
}

// formatValue writes a value short: 1234567 → 123.5万, 0.25 → 0.25.
func formatValue(v float64) string {
	switch {
	case v >= 1e8:
		return trimZero(fmt.Sprintf("%.1f", v/1e8)) + "亿"
	case v >= 1e4:
		return trimZero(fmt.Sprintf("%.1f", v/1e4)) + "万"
	case v == math.Trunc(v):
		return fmt.Sprintf("%.0f", v)
	default:
		return trimZero(fmt.Sprintf("%.2f", v))
	}
}

func trimZero(s string) string {
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
