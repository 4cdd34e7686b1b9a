// Package reviewtest is for tests only: a small deterministic card grader
// for the console's and the API's review tests, whose outcomes a test can
// set by the anchors a text carries.
package reviewtest

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Limit is the longest summary Grader takes.
const Limit = 120

// Grader: σ is the share of the card's stored anchors the text contains;
// 0.85 and up is green, 0.70 and up yellow, below red; relevance is always
// 6. A text over Limit characters is refused.
func Grader(card *model.SummaryCard, text string) (store.CardRewrite, []model.CardAnchor, error) {
	if n := utf8.RuneCountInString(text); n > Limit {
		return store.CardRewrite{}, nil, fmt.Errorf("摘要有 %d 字，超过本篇上限 %d 字", n, Limit)
	}
	var missing []model.CardAnchor
	for _, a := range card.Anchors {
		if !strings.Contains(text, a.Text) {
			missing = append(missing, a)
		}
	}
	covered := len(card.Anchors) - len(missing)
	sigma := 1.0
	if len(card.Anchors) > 0 {
		sigma = float64(covered) / float64(len(card.Anchors))
	}
	grade := model.GradeRed
	switch {
	case sigma >= 0.85:
		grade = model.GradeGreen
	case sigma >= 0.70:
		grade = model.GradeYellow
	}
	return store.CardRewrite{Summary: text, Covered: covered, Sigma: sigma, Relevance: 6, Grade: grade}, missing, nil
}
