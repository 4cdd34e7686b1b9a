package ui

import (
	"errors"
	"net/http"
	"strconv"
	"strings"

	"zhizhi/internal/auth"
	"zhizhi/internal/model"
	"zhizhi/internal/review"
	"zhizhi/internal/store"
)

// cardRewrite grades a person's rewrite of a card and saves it — audited,
// the machine's cut kept beside it — only when it grades green. Any other
// outcome gives the form back with the text as typed and says why.
func (c *console) cardRewrite(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	card, ok := c.cardOfPath(w, r)
	if !ok {
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxFormBytes)
	if err := r.ParseForm(); err != nil {
		c.renderCard(w, r, http.StatusBadRequest, card, card.Summary, nil, page{Error: "请求无效，请重新填写。"})
		return
	}
	text := r.PostFormValue("summary")
	p, _ := auth.FromContext(ctx)
	saved, err := review.Rewrite(ctx, c.store, c.cards, card.ID, text, p.Actor())
	var (
		textErr  *review.TextError
		notGreen *review.NotGreen
	)
	switch {
	case err == nil:
		c.log.Info("card rewritten from the console", "card", saved.ID, "actor", p.Actor(), "sigma", saved.Sigma)
		http.Redirect(w, r, Prefix+"/cards/"+strconv.FormatInt(saved.ID, 10)+"?saved=1", http.StatusSeeOther)
	case errors.Is(err, store.ErrNotFound):
		c.notFound(w, r, "没有这张摘要卡。")
	case errors.Is(err, review.ErrNoGrader):
		c.renderCard(w, r, http.StatusServiceUnavailable, card, text, nil,
			page{Error: "服务器未配置摘要评分，暂时不能改写；请联系系统管理员。"})
	case errors.Is(err, review.ErrFrozen):
		c.renderCard(w, r, http.StatusConflict, card, text, nil,
			page{Error: "这张摘要卡已应源站请求下架（冻结），不能改写。"})
	case errors.As(err, &textErr):
		c.renderCard(w, r, http.StatusBadRequest, card, text, nil, page{Error: "改写未保存：" + textErr.Msg})
	case errors.As(err, &notGreen):
		c.renderCard(w, r, http.StatusUnprocessableEntity, card, text, notGreen, page{Error: notGreenMessage(notGreen)})
	default:
		c.serverError(w, r, err)
	}
}

// notGreenMessage says why a graded rewrite was not saved and what to add.
func notGreenMessage(e *review.NotGreen) string {
	names := make([]string, 0, len(e.Missing))
	for _, a := range e.Missing {
		names = append(names, "「"+a.Text+"」")
	}
	msg := "改写未保存：新摘要评为" + gradeBadge(e.Grade).Label + "（σ = " + fmtSigma(e.Sigma) + "，覆盖 " +
		strconv.Itoa(e.Covered) + "/" + strconv.Itoa(e.Total) + " 个核心锚点）。"
	if len(names) > 0 {
		msg += "仍缺少：" + strings.Join(names, "、") + "。"
	} else if e.Grade != model.GradeGreen {
		msg += "锚点已齐，请检查摘要与原文首尾段是否相关。"
	}
	return msg + "只有评为绿色（σ ≥ 0.85 且与原文相关）的改写才会保存。"
}
