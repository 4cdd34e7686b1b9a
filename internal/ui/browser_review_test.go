package ui

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"zhizhi/internal/model"
	"zhizhi/internal/review/reviewtest"
	"zhizhi/internal/store/storetest"
)

// TestReviewInChromium drives the portal's hand work as an operator does,
// in headless Chromium: an overdue request stands out in red; record a page
// takedown, carry it out, read the receipt; then refuse a yellow rewrite
// of a card and save a green one. Every step is photographed.
func TestReviewInChromium(t *testing.T) {
	w := reviewWorld(t, storetest.SQLite(t), reviewtest.Grader)
	ids := seedCards(t, w)
	ctx := context.Background()
	lz, err := w.st.SiteByCode(ctx, "lianzhou")
	if err != nil {
		t.Fatal(err)
	}
	late := &model.Takedown{SiteID: lz.ID, Scope: model.TakedownSite, Requester: "连州市人民政府办公室",
		ReceivedAt: w.now.Add(-49 * time.Hour), RecordedBy: "user:operator"}
	if err := w.st.RecordTakedown(ctx, late); err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/admin/", w.h)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	b := openBrowser(t)

	b.do("log in", chromedp.Navigate(srv.URL+"/admin/takedowns"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=username]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=username]`), "operator"),
		chromedp.SendKeys(chromedp.CSS(`input[name=password]`), "pw-operator"),
		chromedp.Click(chromedp.CSS(`button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`table.open-takedowns`)))
	// The overdue request is drawn red (#c62828), not just marked so.
	if red, err := chromedp.Run(b.tab, chromedp.Evaluate[string](
		`getComputedStyle(document.querySelector("tr.takedown-overdue .badge.overdue")).backgroundColor`)); err != nil || red != "rgb(198, 40, 40)" {
		t.Errorf("the overdue request's badge is drawn %q (%v), want red", red, err)
	}
	if s := b.text(fmt.Sprintf(`#takedown-%d`, late.ID)); !strings.Contains(s, "已超期 1 小时 0 分") {
		t.Errorf("the overdue row says %q", s)
	}

	b.do("record a page takedown",
		chromedp.SetValue(chromedp.CSS(`select[name=site_id]`), siteID(t, w, "qingyuan")),
		chromedp.Click(chromedp.CSS(`input[name=scope][value=urls]`)),
		chromedp.SetValue(chromedp.CSS(`textarea[name=urls]`), "http://www.qingyuan.gov.test/card/0.html"),
		chromedp.SendKeys(chromedp.CSS(`input[name=requester]`), "清远市教育局办公室"),
		chromedp.SendKeys(chromedp.CSS(`input[name=contact]`), "0763-1234567"),
		chromedp.SetValue(chromedp.CSS(`textarea[name=reason]`), "招生通知已撤回，请下架摘要。"))
	b.shoot("r1-takedowns")
	b.do("submit it", chromedp.Click(chromedp.CSS(`form.takedown-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`form[action$="/freeze"] button`)))
	b.do("carry it out", chromedp.Click(chromedp.CSS(`form[action$="/freeze"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`dd.cards-frozen`)))
	if s := b.text(`.flash.ok`); !strings.Contains(s, "冻结 1 张摘要卡") {
		t.Errorf("after 执行下架 the page says %q", s)
	}
	if s := b.text(`section.receipt`); !strings.Contains(s, "TD-") || !strings.Contains(s, "冻结而非删除") {
		t.Errorf("the receipt shows:\n%s", s)
	}
	b.shoot("r2-takedown-receipt")
	if card, _ := w.st.CardByID(ctx, ids[cardYellow]); card.TakedownID == nil {
		t.Errorf("the card named by the request is not frozen")
	}

	card := fmt.Sprintf("/admin/cards/%d", ids[cardHostile])
	b.do("open the review list", chromedp.Click(chromedp.CSS(`nav.side a[href="/admin/cards"]`)),
		chromedp.WaitVisible(chromedp.CSS(`#card-table`)))
	b.shoot("r3-cards")
	b.do("open a yellow card", chromedp.Navigate(srv.URL+card), chromedp.WaitVisible(chromedp.CSS(`textarea[name=summary]`)))
	b.do("send a rewrite that still grades yellow",
		chromedp.SetValue(chromedp.CSS(`textarea[name=summary]`), "只写了一句改写，没有锚点。"),
		chromedp.Click(chromedp.CSS(`form.rewrite-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.refused`)))
	if s := b.text(`.flash.err`); !strings.Contains(s, "改写未保存") || !strings.Contains(s, "仍缺少") {
		t.Errorf("a red rewrite: the page says %q", s)
	}
	b.shoot("r4-card-refused")
	b.do("send one that grades green",
		chromedp.SetValue(chromedp.CSS(`textarea[name=summary]`), "锚点"+hostile+"已写入。"),
		chromedp.Click(chromedp.CSS(`form.rewrite-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash.ok`)))
	if s := b.text(`.current-summary`); !strings.Contains(s, hostile) {
		t.Errorf("the saved rewrite shows %q", s)
	}
	b.shoot("r5-card-saved")
	b.checkClean()
}
