package summary

import (
	"context"
	"sort"
	"testing"
	"unicode/utf8"

	"zhizhi/internal/sim"
)

// BenchmarkBuild builds the card of a typical article of the simulated web:
// the full-access article of median length.
func BenchmarkBuild(b *testing.B) {
	w, err := sim.Start(context.Background(), sim.Options{Seed: 1})
	if err != nil {
		b.Fatalf("start simulated web: %v", err)
	}
	var full []sim.TruthArticle
	for _, a := range w.Truth() {
		if a.Access == "full" {
			full = append(full, a)
		}
	}
	w.Close()
	sort.Slice(full, func(i, j int) bool {
		return utf8.RuneCountInString(full[i].BodyText) < utf8.RuneCountInString(full[j].BodyText)
	})
	a := full[len(full)/2]
	in := Input{Title: a.Title, Text: a.BodyText, SourceURL: a.URL}
	for b.Loop() {
		Build(in)
	}
	b.ReportMetric(float64(utf8.RuneCountInString(a.BodyText)), "chars")
}
