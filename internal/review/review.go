// Package review owns what people change by hand in what the public portal
// shows: a person's rewrite of a summary card the machine's cut left below
// the bar, and a source site's request to take its cards down. The console
// and the API both go through it, so a rewrite is held to the same gate and
// a takedown to the same checks whichever way it arrives.
package review

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Grader grades a person's text for a card with the gates the machine's
// cut went through: it returns the rewrite to save (summary, covered
// anchors, σ, relevance, grade; Actor is filled in here), the card's core
// anchors the text misses, and an error when the text cannot be a summary
// at all (too long, say) — its message is shown to the person as it is.
type Grader func(card *model.SummaryCard, text string) (store.CardRewrite, []model.CardAnchor, error)

// maxSummaryRunes is the longest summary the store keeps: a card's summary
// is at most 300 characters. The grader applies the tighter limit (10% of
// the original); this only keeps a grader's mistake from reaching the
// database.
const maxSummaryRunes = 300

// ErrNoGrader: the server was started without a grader, so no rewrite can
// be judged and none is saved.
var ErrNoGrader = errors.New("card rewrites are not available: the server has no card grader")

// ErrFrozen: the card was taken down at its site's request; it stays as it
// was frozen.
var ErrFrozen = errors.New("the card is taken down at its site's request and cannot be rewritten")

// TextError is a rewrite refused for its text itself (empty, too long);
// Msg says what to change.
type TextError struct{ Msg string }

func (e *TextError) Error() string { return e.Msg }

// NotGreen is a rewrite that was graded but not green: it is not saved, and
// the person sees what it scored and which anchors it still misses.
type NotGreen struct {
	Grade   string
	Sigma   float64
	Covered int
	Total   int
	Missing []model.CardAnchor
}

func (e *NotGreen) Error() string {
	return fmt.Sprintf("the rewrite grades %s (σ %.2f, %d of %d anchors); only a green rewrite is saved",
		e.Grade, e.Sigma, e.Covered, e.Total)
}

// Rewrite grades text as card id's new summary and saves it, audited under
// actor, only when it grades green. A refusal is a *TextError, a *NotGreen,
// ErrFrozen or ErrNoGrader, each with the card as it is stored.
func Rewrite(ctx context.Context, st *store.Store, grade Grader, id int64, text, actor string) (*model.SummaryCard, error) {
	card, err := st.CardByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if grade == nil {
		return card, ErrNoGrader
	}
	if card.TakedownID != nil {
		return card, ErrFrozen
	}
	text = CleanText(text)
	if text == "" {
		return card, &TextError{"请填写改写后的摘要。"}
	}
	if !utf8.ValidString(text) {
		return card, &TextError{"摘要含有无效字符，请重新输入。"}
	}
	rw, missing, err := grade(card, text)
	if err != nil {
		return card, &TextError{err.Error()}
	}
	if rw.Summary == "" {
		rw.Summary = text
	}
	if n := utf8.RuneCountInString(rw.Summary); n > maxSummaryRunes {
		return card, &TextError{fmt.Sprintf("摘要有 %d 字，超过 %d 字的上限，请删减。", n, maxSummaryRunes)}
	}
	if rw.Grade != model.GradeGreen {
		return card, &NotGreen{Grade: rw.Grade, Sigma: rw.Sigma, Covered: rw.Covered, Total: len(card.Anchors), Missing: missing}
	}
	rw.Actor = actor
	return st.RewriteCard(ctx, id, rw)
}

// CleanText is a posted summary as it is graded and kept: the line ends a
// browser sends normalised, the edges trimmed.
func CleanText(s string) string {
	return strings.TrimSpace(strings.ReplaceAll(s, "\r\n", "\n"))
}

// Missing lists the card's core anchors its current summary misses, as the
// grader judges them; without a grader (or when it refuses the stored text)
// an anchor is missing when its text does not appear in the summary.
func Missing(card *model.SummaryCard, grade Grader) []model.CardAnchor {
	if grade != nil {
		if _, missing, err := grade(card, card.Summary); err == nil {
			return missing
		}
	}
	var out []model.CardAnchor
	for _, a := range card.Anchors {
		if !strings.Contains(card.Summary, a.Text) {
			out = append(out, a)
		}
	}
	return out
}
