package review

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

// Limits of a takedown request, as the store keeps it.
const (
	maxNameRunes   = 200  // requester, contact
	maxReasonRunes = 2000 // reason
	maxURLs        = 1000 // pages in one request
	maxURLRunes    = 2000 // one page address
)

// TakedownRequest is a site's request as a person or program hands it in.
type TakedownRequest struct {
	SiteID     int64
	Scope      string // model.TakedownSite or model.TakedownURLs
	URLs       []string
	Requester  string
	Contact    string
	Reason     string
	ReceivedAt time.Time // zero: now, by the store's clock
	RecordedBy string
	FreezeNow  bool // carry it out at once, after recording it
}

// Problem is one refused field of a request, with what to change.
type Problem struct {
	Field   string // site_id, scope, urls, requester, contact, reason
	Message string
}

// InputError is a request refused before anything was recorded.
type InputError struct{ Problems []Problem }

func (e *InputError) Error() string {
	msgs := make([]string, len(e.Problems))
	for i, p := range e.Problems {
		msgs[i] = p.Field + ": " + p.Message
	}
	return "takedown request refused: " + strings.Join(msgs, "; ")
}

// RecordTakedown checks a request, records it (its 48-hour deadline runs
// from ReceivedAt) and, with FreezeNow, carries it out. Nothing is
// recorded when a field is refused (*InputError). When the freeze fails
// after the request was recorded, the recorded request is returned with
// the error: it stays open, to be carried out again.
func RecordTakedown(ctx context.Context, st *store.Store, in TakedownRequest) (*model.Takedown, error) {
	var site *model.Site
	var problems []Problem
	if in.SiteID <= 0 {
		problems = append(problems, Problem{"site_id", "请选择提出请求的站点。"})
	} else {
		s, err := st.SiteByID(ctx, in.SiteID)
		switch {
		case errors.Is(err, store.ErrNotFound):
			problems = append(problems, Problem{"site_id", fmt.Sprintf("没有 ID 为 %d 的站点，请从站点列表中选择。", in.SiteID)})
		case err != nil:
			return nil, err
		default:
			site = s
		}
	}
	k, more := checkTakedown(site, in)
	if problems = append(problems, more...); len(problems) > 0 {
		return nil, &InputError{problems}
	}
	if err := st.RecordTakedown(ctx, k); err != nil {
		return nil, err
	}
	if !in.FreezeNow {
		return k, nil
	}
	done, err := st.FreezeTakedown(ctx, k.ID, in.RecordedBy)
	if err != nil {
		return k, fmt.Errorf("takedown %d recorded, not carried out: %w", k.ID, err)
	}
	return done, nil
}

// checkTakedown checks every field but the site's existence (site is nil
// when it does not exist, and the addresses are then not checked against
// it).
func checkTakedown(site *model.Site, in TakedownRequest) (*model.Takedown, []Problem) {
	var p []Problem
	add := func(field, format string, args ...any) {
		p = append(p, Problem{field, fmt.Sprintf(format, args...)})
	}
	k := &model.Takedown{SiteID: in.SiteID, Scope: in.Scope, Requester: strings.TrimSpace(in.Requester),
		Contact: strings.TrimSpace(in.Contact), Reason: strings.TrimSpace(in.Reason), ReceivedAt: in.ReceivedAt,
		RecordedBy: in.RecordedBy}
	var urls []string
	for _, u := range in.URLs {
		if u = strings.TrimSpace(u); u != "" {
			urls = append(urls, u)
		}
	}
	switch in.Scope {
	case model.TakedownSite:
		if len(urls) > 0 {
			add("urls", "整站下架不需填写页面网址；只下架部分页面请选择「指定页面」。")
		}
	case model.TakedownURLs:
		k.URLs = checkPageURLs(site, urls, add)
	default:
		add("scope", "请选择下架范围：整站或指定页面。")
	}
	for _, f := range []struct {
		field, label, value string
		max                 int
		required            bool
	}{
		{"requester", "提出人（单位）", k.Requester, maxNameRunes, true},
		{"contact", "联系方式", k.Contact, maxNameRunes, false},
		{"reason", "理由", k.Reason, maxReasonRunes, false},
	} {
		switch {
		case !utf8.ValidString(f.value):
			add(f.field, "%s含有无效字符，请重新输入。", f.label)
		case f.required && f.value == "":
			add(f.field, "请填写%s。", f.label)
		case utf8.RuneCountInString(f.value) > f.max:
			add(f.field, "%s过长，请控制在 %d 字以内。", f.label, f.max)
		}
	}
	return k, p
}

// checkPageURLs keeps each distinct address of a page takedown, refusing
// any that is not a full http(s) address on the site's own host. An
// address is kept as written — cards are matched by the exact address they
// were read from — less a fragment, which names a place in a page, not
// another page.
func checkPageURLs(site *model.Site, urls []string, add func(field, format string, args ...any)) []string {
	if len(urls) == 0 {
		add("urls", "请至少填写一个页面网址，每行一个。")
		return nil
	}
	if len(urls) > maxURLs {
		add("urls", "一次最多 %d 个页面网址（现有 %d 个），请分成几次登记，或选择「整站」。", maxURLs, len(urls))
		return nil
	}
	var base *url.URL
	if site != nil {
		base, _ = url.Parse(site.BaseURL)
	}
	seen := map[string]bool{}
	var out []string
	for i, raw := range urls {
		line := i + 1
		if !utf8.ValidString(raw) || utf8.RuneCountInString(raw) > maxURLRunes {
			add("urls", "第 %d 个网址过长或含有无效字符。", line)
			continue
		}
		u, err := url.Parse(raw)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			add("urls", "第 %d 个网址「%s」不是完整网址：请以 http:// 或 https:// 开头并带主机名。", line, raw)
			continue
		}
		if base != nil && base.Host != "" && !strings.EqualFold(base.Host, u.Host) {
			add("urls", "第 %d 个网址「%s」不在站点「%s」（%s）上：只能下架该站点自己的页面。", line, raw, site.SiteName, base.Host)
			continue
		}
		if s, _, _ := strings.Cut(raw, "#"); !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
