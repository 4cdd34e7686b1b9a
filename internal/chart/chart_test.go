package chart

import (
	"encoding/xml"
	"math"
	"strings"
	"testing"
)

// wellFormed parses the SVG as XML: a browser drops a chart that is not.
func wellFormed(t *testing.T, svg string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(svg))
	for {
		_, err := d.Token()
		if err != nil {
			if err.Error() == "EOF" {
				return
			}
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
	}
}

func TestChartEscapesEveryText(t *testing.T) {
	hostile := `<script>alert(1)</script>"&'`
	svg := string(SVG(Chart{Title: hostile, Labels: []string{hostile, "11-30"}, Unit: hostile,
		Series: []Series{{Name: hostile, Values: []float64{3, 5}, Color: `red" onload="x`}}}))
	wellFormed(t, svg)
	for _, bad := range []string{"<script>", `" onload="`} {
		if strings.Contains(svg, bad) {
			t.Fatalf("unescaped %q in\n%s", bad, svg)
		}
	}
}

// TestChartScale: the tallest value reaches the top of a fitted axis,
// which is rounded up to 1, 2 or 5 times a power of ten; a fixed Max
// (a ratio's 1) holds even when the data stays lower.
func TestChartScale(t *testing.T) {
	svg := string(SVG(Chart{Title: "请求", Labels: []string{"a", "b"}, Bars: true,
		Series: []Series{{Name: "请求", Values: []float64{40, 160}}}}))
	wellFormed(t, svg)
	if !strings.Contains(svg, ">200<") {
		t.Fatalf("axis top for a maximum of 160 should read 200:\n%s", svg)
	}
	// 160 of 200 is 80% of the 168-pixel plot: 134.4 px tall.
	if !strings.Contains(svg, `height="134.4"`) {
		t.Fatalf("bar of 160 on a 200 axis not 134.4 px tall:\n%s", svg)
	}
	fixed := string(SVG(Chart{Title: "α", Labels: []string{"a"}, Max: 1, Series: []Series{{Name: "α", Values: []float64{0.5}}}}))
	if !strings.Contains(fixed, ">1<") || !strings.Contains(fixed, `cy="112.0"`) {
		t.Fatalf("0.5 on a fixed 0–1 axis must sit half way (y 28+84):\n%s", fixed)
	}
}

func TestChartWithoutData(t *testing.T) {
	for _, c := range []Chart{{Title: "空"}, {Title: "零", Labels: []string{"a"}, Series: []Series{{Name: "x", Values: []float64{0}}}},
		{Title: "缺", Labels: []string{"a", "b"}, Series: []Series{{Name: "x", Values: []float64{math.NaN(), 2}}}}} {
		svg := string(SVG(c))
		wellFormed(t, svg)
		if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
			t.Fatalf("%s: NaN or Inf drawn:\n%s", c.Title, svg)
		}
	}
	if svg := string(SVG(Chart{Title: "空"})); !strings.Contains(svg, "暂无数据") {
		t.Fatalf("an empty chart must say so:\n%s", svg)
	}
}

func TestFormatValue(t *testing.T) {
	for in, want := range map[float64]string{0: "0", 7: "7", 0.25: "0.25", 12345: "1.2万", 250000000: "2.5亿", 20000: "2万"} {
		if got := formatValue(in); got != want {
			t.Errorf("formatValue(%v) = %q, want %q", in, got, want)
		}
	}
}
