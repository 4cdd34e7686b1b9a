package ui

import (
	"fmt"
	"net/http"
	"time"

	"zhizhi/internal/auth"
	"zhizhi/internal/model"
	"zhizhi/internal/review"
)

// CardGrader grades a person's rewrite of a summary card: the rewrite to
// save, the card's core anchors the text misses, and an error whose message
// the person is shown when the text cannot be a summary (too long).
type CardGrader = review.Grader

// reviewRoutes adds the pages of the portal's hand work: takedown requests
// and card review. Everyone signed in reads them; recording, carrying out
// and rewriting are an operator's.
func (c *console) reviewRoutes(mux *http.ServeMux, v, o auth.Role) {
	mux.Handle("GET "+Prefix+"/takedowns", c.require(v, c.takedownList))
	mux.Handle("POST "+Prefix+"/takedowns", c.require(o, c.takedownCreate))
	mux.Handle("GET "+Prefix+"/takedowns/{id}", c.require(v, c.takedownShow))
	mux.Handle("POST "+Prefix+"/takedowns/{id}/freeze", c.require(o, c.takedownFreeze))
	mux.Handle("GET "+Prefix+"/cards", c.require(v, c.cardList))
	mux.Handle("GET "+Prefix+"/cards/{id}", c.require(v, c.cardShow))
	mux.Handle("POST "+Prefix+"/cards/{id}/rewrite", c.require(o, c.cardRewrite))
}

// gradeBadge is how a card's grade is named and coloured on the pages.
func gradeBadge(grade string) badge {
	switch grade {
	case model.GradeGreen:
		return badge{"绿 · 已收录", "green"}
	case model.GradeYellow:
		return badge{"黄 · 待人工改写", "yellow"}
	case model.GradeRed:
		return badge{"红 · 仅标题和链接", "red"}
	}
	return badge{grade, "grey"}
}

// timeLeft says how long a request has until its deadline, or how long it
// is overdue, in whole minutes.
func timeLeft(now, deadline time.Time) (text string, overdue bool) {
	d := deadline.Sub(now)
	if overdue = d < 0; overdue {
		d = -d
	}
	m := int(d / time.Minute)
	var span string
	switch {
	case m == 0:
		span = "不到 1 分钟"
	case m < 60:
		span = fmt.Sprintf("%d 分钟", m)
	default:
		span = fmt.Sprintf("%d 小时 %d 分", m/60, m%60)
	}
	if overdue {
		return "已超期 " + span, true
	}
	return "剩余 " + span, false
}

// scopeLabel names a takedown's scope.
func scopeLabel(scope string) string {
	switch scope {
	case model.TakedownSite:
		return "整站"
	case model.TakedownURLs:
		return "指定页面"
	}
	return scope
}
