package review

import (
	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/summary"
)

// Grade is the Grader serve uses: the card's own gauge — its core anchors,
// the fingerprint of its source's first and last paragraphs and its length
// cap, all kept on the card — with the gates the machine's cut went
// through. It needs no source text, which a summary-access site never keeps.
func Grade(card *model.SummaryCard, text string) (store.CardRewrite, []model.CardAnchor, error) {
	g := summary.Gauge{Reference: card.ReferenceSimhash, Limit: card.SummaryLimit}
	for _, a := range card.Anchors {
		g.Anchors = append(g.Anchors, summary.Anchor{Text: a.Text, Kind: a.Kind})
	}
	v, err := summary.Regrade(g, text)
	if err != nil {
		return store.CardRewrite{}, nil, err
	}
	var missing []model.CardAnchor
	for _, a := range v.Missing {
		missing = append(missing, model.CardAnchor{Text: a.Text, Kind: a.Kind})
	}
	return store.CardRewrite{Summary: text, Covered: v.Covered, Sigma: v.Sigma, Relevance: v.Relevance,
		Grade: string(v.Grade)}, missing, nil
}
