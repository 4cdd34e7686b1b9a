package ui

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"zhizhi/internal/acquire"
	"zhizhi/internal/store"
)

// The Studio (工作台) lets an operator onboarding a new portal try the
// acquisition API on one address — fetch, render, a small crawl, a PDF —
// and read the result, the evidence and the cost before anyone writes
// the site's YAML. The console calls the API in-process with the
// signed-in person's session (unmetered, as every console session is),
// from its own form posts: no script of the console's talks to /v1, and
// the page shows fetched content only through html/template, as text.
const (
	studioMaxLimit  = 20 // pages of a Studio crawl: a look, not a harvest
	studioMaxDepth  = 5
	studioPageChars = 600 // of each crawled page's Markdown shown unfolded
	// studioMaxAnswer bounds an API answer the console reads: the API's
	// own byte limit (10 MiB a page) in a few formats.
	studioMaxAnswer = 48 << 20
)

// studioForm is what the person asked for, kept to fill the form again.
type studioForm struct {
	URL       string
	Mode      string // fetch, render, crawl, pdf
	MainOnly  bool
	Links     bool
	HTML      bool
	RawHTML   bool
	Limit     int
	Depth     int
	PDFAction string // inspect, parse
}

type studioMode struct{ Value, Label, Hint string }

var studioModes = []studioMode{
	{"fetch", "抓取", "直接请求页面（最快，适合大多数政府网站）"},
	{"render", "渲染", "用无头浏览器打开页面，执行页面脚本后再取正文（较慢）"},
	{"crawl", "小规模爬取", "从此地址出发，在同一站点内按链接抓取少量页面"},
	{"pdf", "PDF", "检查或解析一个 PDF 文件"},
}

// studioView is the Studio page.
type studioView struct {
	Enabled  bool // the acquisition API is served
	Form     studioForm
	Modes    []studioMode
	MaxLimit int
	MaxDepth int
	Result   *studioDoc   // fetch or render
	PDF      *studioPDF   // pdf
	Crawl    *studioCrawl // a crawl job
	Failure  *studioFailure
}

// studioDoc is one page's answer as the Studio shows it.
type studioDoc struct {
	Provider  string
	Markdown  string
	HTML      *string
	RawHTML   *string
	Links     *[]string
	Meta      acquire.Metadata
	Attrs     []studioAttr
	Acq       acquire.Acquisition
	BrowserS  string
	Truncated bool // crawl pages: Markdown cut to studioPageChars
}

type studioAttr struct{ Label, Value string }

// studioPDF is a PDF endpoint's answer, read loosely: the Studio shows
// what it knows and leaves the rest to the API's own documentation.
type studioPDF struct {
	Action string
	Data   struct {
		Report struct {
			Version    string `json:"version"`
			Bytes      int64  `json:"bytes"`
			PageCount  int    `json:"page_count"`
			Class      string `json:"class"`
			OCRPages   []int  `json:"ocr_pages"`
			JavaScript bool   `json:"javascript"`
			Encryption struct {
				Encrypted bool `json:"encrypted"`
			} `json:"encryption"`
		} `json:"report"`
		Text        string `json:"text"`
		OCRSkipped  []int  `json:"ocr_skipped"`
		Acquisition struct {
			FinalURL string `json:"final_url"`
			Provider string `json:"provider"`
			Raw      struct {
				SHA256 string `json:"sha256"`
				Bytes  int    `json:"bytes"`
			} `json:"raw"`
			Evidence struct {
				Attempts   int    `json:"attempts"`
				Status     int    `json:"status"`
				WireBytes  int64  `json:"wire_bytes"`
				DurationMS int64  `json:"duration_ms"`
				Robots     string `json:"robots"`
				ParseMS    int64  `json:"parse_ms"`
			} `json:"evidence"`
		} `json:"acquisition"`
	} `json:"data"`
}

// studioCrawl is a crawl job with the pages it has answered so far.
type studioCrawl struct {
	ID            string
	Status        string
	Running       bool
	Total         int
	Completed     int
	Failure       string
	Pages         []studioDoc
	WireBytes     int64
	Errors        []studioCrawlError
	RobotsBlocked []string
}

type studioCrawlError struct {
	URL   string `json:"url"`
	Error string `json:"error"`
	Code  string `json:"code"`
}

// studioFailure is an answer with success false in the person's words.
type studioFailure struct {
	Heading string
	Advice  string
	Code    string
	Detail  string // the API's own words, shown as they are
}

func (c *console) studioShow(w http.ResponseWriter, r *http.Request) {
	c.renderStudio(w, r, http.StatusOK, c.studioView(studioForm{Mode: "fetch", MainOnly: true, Links: true, Limit: 3, Depth: 2, PDFAction: "inspect"}))
}

func (c *console) studioView(f studioForm) studioView {
	return studioView{Enabled: c.acquire != nil, Form: f, Modes: studioModes, MaxLimit: studioMaxLimit, MaxDepth: studioMaxDepth}
}

func (c *console) renderStudio(w http.ResponseWriter, r *http.Request, status int, v studioView) {
	c.render(w, r, status, "studio", page{Title: "工作台", Active: "studio", Data: v})
}

// studioRun serves the form: one fetch, render or PDF answered on the
// page, or a crawl job started and its page opened.
func (c *console) studioRun(w http.ResponseWriter, r *http.Request) {
	f, msg := readStudioForm(r)
	v := c.studioView(f)
	if msg != "" {
		c.render(w, r, http.StatusBadRequest, "studio", page{Title: "工作台", Active: "studio", Error: msg, Data: v})
		return
	}
	if c.acquire == nil {
		c.render(w, r, http.StatusServiceUnavailable, "studio", page{Title: "工作台", Active: "studio", Data: v})
		return
	}
	scrape := map[string]any{"formats": f.formats(), "onlyMainContent": f.MainOnly}
	switch f.Mode {
	case "fetch", "render":
		body := map[string]any{"url": f.URL}
		for k, x := range scrape {
			body[k] = x
		}
		status, raw, err := c.callAcquire(r, http.MethodPost, "/v1/"+f.Mode, body)
		if err != nil {
			c.serverError(w, r, err)
			return
		}
		var ans struct {
			Success bool              `json:"success"`
			Data    *acquire.Document `json:"data"`
		}
		if status != http.StatusOK || json.Unmarshal(raw, &ans) != nil || !ans.Success || ans.Data == nil {
			v.Failure = studioFailureOf(status, raw, f.Mode)
		} else {
			d := studioDocOf(ans.Data, 0)
			v.Result = &d
		}
	case "pdf":
		status, raw, err := c.callAcquire(r, http.MethodPost, "/v1/pdf/"+f.PDFAction, map[string]any{"url": f.URL})
		if err != nil {
			c.serverError(w, r, err)
			return
		}
		p := &studioPDF{Action: f.PDFAction}
		if status != http.StatusOK || json.Unmarshal(raw, p) != nil {
			v.Failure = studioFailureOf(status, raw, f.Mode)
		} else {
			v.PDF = p
		}
	case "crawl":
		body := map[string]any{"url": f.URL, "limit": f.Limit, "maxDiscoveryDepth": f.Depth, "scrapeOptions": scrape}
		status, raw, err := c.callAcquire(r, http.MethodPost, "/v1/crawl", body)
		if err != nil {
			c.serverError(w, r, err)
			return
		}
		var ans struct {
			Success bool   `json:"success"`
			ID      string `json:"id"`
		}
		if status != http.StatusOK || json.Unmarshal(raw, &ans) != nil || !ans.Success || ans.ID == "" {
			v.Failure = studioFailureOf(status, raw, f.Mode)
			break
		}
		http.Redirect(w, r, Prefix+"/studio/crawl/"+url.PathEscape(ans.ID), http.StatusSeeOther)
		return
	}
	c.renderStudio(w, r, http.StatusOK, v)
}

func readStudioForm(r *http.Request) (studioForm, string) {
	if err := r.ParseForm(); err != nil {
		return studioForm{Mode: "fetch"}, "表单无法读取，请刷新页面后重试。"
	}
	f := studioForm{URL: strings.TrimSpace(r.PostFormValue("url")), Mode: r.PostFormValue("mode"),
		MainOnly: r.PostFormValue("main_only") != "", Links: r.PostFormValue("links") != "",
		HTML: r.PostFormValue("html") != "", RawHTML: r.PostFormValue("raw_html") != "", PDFAction: r.PostFormValue("pdf_action")}
	var msgs []string
	if f.PDFAction != "parse" {
		f.PDFAction = "inspect"
	}
	switch f.Mode {
	case "fetch", "render", "crawl", "pdf":
	default:
		f.Mode = "fetch"
		msgs = append(msgs, "请选择一种方式：抓取、渲染、小规模爬取或 PDF。")
	}
	if u, err := url.Parse(f.URL); f.URL == "" || err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		msgs = append(msgs, "请填写以 http:// 或 https:// 开头的完整网址。")
	}
	var bad bool
	if f.Limit, bad = formInt(r, "limit", 3, 1, studioMaxLimit); bad {
		msgs = append(msgs, fmt.Sprintf("页数上限请填 1 到 %d 之间的整数。", studioMaxLimit))
	}
	if f.Depth, bad = formInt(r, "depth", 2, 0, studioMaxDepth); bad {
		msgs = append(msgs, fmt.Sprintf("链接深度请填 0 到 %d 之间的整数。", studioMaxDepth))
	}
	return f, strings.Join(msgs, "")
}

// formInt reads a whole number field, def when empty; bad when it is not
// one within [lo, hi].
func formInt(r *http.Request, name string, def, lo, hi int) (int, bool) {
	s := strings.TrimSpace(r.PostFormValue(name))
	if s == "" {
		return def, false
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < lo || n > hi {
		return def, true
	}
	return n, false
}

func (f studioForm) formats() []string {
	out := []string{"markdown"}
	if f.Links {
		out = append(out, "links")
	}
	if f.HTML {
		out = append(out, "html")
	}
	if f.RawHTML {
		out = append(out, "rawHtml")
	}
	return out
}

// studioCrawlShow is a crawl job's page: its state and its pages so far,
// polled while it runs.
func (c *console) studioCrawlShow(w http.ResponseWriter, r *http.Request) {
	if c.acquire == nil {
		// A page to read, saying the Studio is off here.
		c.renderStudio(w, r, http.StatusOK, c.studioView(studioForm{Mode: "crawl"}))
		return
	}
	cr, fail, err := c.loadStudioCrawl(r, r.PathValue("id"))
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	if fail != nil {
		c.notFound(w, r, "没有这个爬取任务，或它不是您发起的（任务结果保留 24 小时）。")
		return
	}
	v := c.studioView(studioForm{Mode: "crawl", MainOnly: true, Limit: 3, Depth: 2, PDFAction: "inspect"})
	v.Crawl = cr
	c.render(w, r, http.StatusOK, "studio", page{Title: "工作台 · 小规模爬取", Active: "studio", Data: v})
}

// studioCrawlProgress is the job's panel alone, for htmx to swap in; it
// stops asking once the job is over.
func (c *console) studioCrawlProgress(w http.ResponseWriter, r *http.Request) {
	show := Prefix + "/studio/crawl/" + url.PathEscape(r.PathValue("id"))
	if r.Header.Get("HX-Request") != "true" || c.acquire == nil {
		http.Redirect(w, r, show, http.StatusSeeOther)
		return
	}
	cr, fail, err := c.loadStudioCrawl(r, r.PathValue("id"))
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	if fail != nil {
		w.Header().Set("HX-Redirect", show)
		w.WriteHeader(http.StatusNoContent)
		return
	}
	c.renderFragment(w, r, "studio", "studio-crawl", cr)
}

// studioCrawlCancel cancels the job (DELETE /v1/crawl/{id}) and shows it.
func (c *console) studioCrawlCancel(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	if c.acquire != nil {
		if _, _, err := c.callAcquire(r, http.MethodDelete, "/v1/crawl/"+url.PathEscape(id), nil); err != nil {
			c.serverError(w, r, err)
			return
		}
	}
	http.Redirect(w, r, Prefix+"/studio/crawl/"+url.PathEscape(id), http.StatusSeeOther)
}

// loadStudioCrawl reads the job, all its answered pages (a Studio job has
// at most studioMaxLimit) and its errors. fail is set when the API says
// there is no such job of this person's.
func (c *console) loadStudioCrawl(r *http.Request, id string) (*studioCrawl, *studioFailure, error) {
	cr := &studioCrawl{ID: id}
	for skip := 0; ; {
		status, raw, err := c.callAcquire(r, http.MethodGet, "/v1/crawl/"+url.PathEscape(id)+"?skip="+strconv.Itoa(skip), nil)
		if err != nil {
			return nil, nil, err
		}
		var ans struct {
			Success   bool              `json:"success"`
			Status    string            `json:"status"`
			Total     int               `json:"total"`
			Completed int               `json:"completed"`
			Next      *string           `json:"next"`
			Data      []json.RawMessage `json:"data"`
			Error     string            `json:"error"`
		}
		if status != http.StatusOK || json.Unmarshal(raw, &ans) != nil || !ans.Success {
			return nil, studioFailureOf(status, raw, "crawl"), nil
		}
		cr.Status, cr.Total, cr.Completed, cr.Failure = ans.Status, ans.Total, ans.Completed, ans.Error
		cr.Running = ans.Status == store.CrawlScraping
		for _, d := range ans.Data {
			var doc acquire.Document
			if err := json.Unmarshal(d, &doc); err != nil {
				return nil, nil, fmt.Errorf("studio: crawl page: %w", err)
			}
			cr.WireBytes += doc.Acquisition.Evidence.WireBytes
			cr.Pages = append(cr.Pages, studioDocOf(&doc, studioPageChars))
		}
		if ans.Next == nil || len(ans.Data) == 0 || len(cr.Pages) >= studioMaxLimit*2 {
			break
		}
		skip = len(cr.Pages)
	}
	status, raw, err := c.callAcquire(r, http.MethodGet, "/v1/crawl/"+url.PathEscape(id)+"/errors", nil)
	if err != nil {
		return nil, nil, err
	}
	var errs struct {
		Errors        []studioCrawlError `json:"errors"`
		RobotsBlocked []string           `json:"robotsBlocked"`
	}
	if status == http.StatusOK && json.Unmarshal(raw, &errs) == nil {
		cr.Errors, cr.RobotsBlocked = errs.Errors, errs.RobotsBlocked
	}
	return cr, nil, nil
}

// studioDocOf shapes a Document for the page; cut > 0 cuts its Markdown
// to that many characters.
func studioDocOf(d *acquire.Document, cut int) studioDoc {
	out := studioDoc{Provider: d.Acquisition.Provider, HTML: d.HTML, RawHTML: d.RawHTML, Links: d.Links,
		Meta: d.Metadata, Acq: d.Acquisition}
	if d.Markdown != nil {
		out.Markdown = *d.Markdown
	}
	if cut > 0 {
		if rs := []rune(out.Markdown); len(rs) > cut {
			out.Markdown, out.Truncated = string(rs[:cut]), true
		}
	}
	if s := d.Acquisition.Evidence.BrowserSeconds; s != nil {
		out.BrowserS = strconv.FormatFloat(*s, 'f', 1, 64)
	}
	m := d.Metadata
	for _, a := range []studioAttr{{"索引号", m.IndexNo}, {"文号", m.DocNo}, {"发布机构", m.Publisher},
		{"发布日期", m.PublishDate}, {"生效日期", m.EffectiveDate}, {"主题词", m.TopicWords}, {"公开类别", m.OpenCategory}} {
		if a.Value != "" {
			out.Attrs = append(out.Attrs, a)
		}
	}
	return out
}

// studioFailureOf says an API refusal in the person's words, with what
// to do; the API's own (English) message is kept as the detail.
func studioFailureOf(status int, raw []byte, mode string) *studioFailure {
	var e struct {
		Error string `json:"error"`
		Code  string `json:"code"`
	}
	_ = json.Unmarshal(raw, &e)
	f := &studioFailure{Code: e.Code, Detail: e.Error}
	switch {
	case mode == "pdf" && status == http.StatusNotFound && e.Code == "":
		f.Heading, f.Advice = "此功能尚未启用", "本服务器的获取接口还没有 PDF 检查与解析功能；升级到带 PDF 功能的版本后即可使用。现在可以用「抓取」查看 PDF 所在的页面。"
	case e.Code == acquire.CodeRobotsDisallowed:
		f.Heading, f.Advice = "该网站的 robots.txt 不允许抓取这个地址", "知止遵守网站的 robots.txt，不会抓取此页。请换一个允许抓取的页面；如确需采集，请与网站主办单位联系。"
	case e.Code == acquire.CodeRobotsUnavailable:
		f.Heading, f.Advice = "暂时读不到该网站的 robots.txt，按规则不抓取", "网站的 robots.txt 无法访问时知止不会抓取。请稍后重试；持续出现请到「主机状态」查看该主机。"
	case e.Code == acquire.CodeURLRefused:
		f.Heading, f.Advice = "该地址被安全防护拒绝", "只能访问公网上的 http 或 https 网页；指向内网、本机或保留地址的网址（包括跳转到这些地址的）一律拒绝。请检查网址是否填写正确。"
	case e.Code == acquire.CodeHostBlocked:
		f.Heading, f.Advice = "该主机暂停访问中", "此主机近期连续出错或被拦截，知止暂时不再访问它。请到「主机状态」查看原因，处理后再试。"
	case e.Code == acquire.CodeChallengeFailed:
		f.Heading, f.Advice = "页面的反爬验证未能通过", "网站在正文前要求浏览器验证，本次没有通过，因此没有取回正文（不会把验证页当作正文）。请稍后重试；仍失败时请与网站主办单位联系，或人工核查。"
	case e.Code == acquire.CodeBrowserUnavailable:
		f.Heading, f.Advice = "服务器上没有可用的浏览器", "「渲染」需要服务器安装 Chromium 浏览器。请联系管理员安装后重启服务；多数政府网站用「抓取」即可。"
	case e.Code == acquire.CodeRenderBusy:
		f.Heading, f.Advice = "浏览器正忙", "同时渲染的页面已达上限，请稍等片刻再试。"
	case e.Code == acquire.CodeTimeout:
		f.Heading, f.Advice = "网站响应超时", "网站在规定时间内没有返回页面。请稍后重试；页面需要执行脚本时可改用「渲染」。"
	case e.Code == acquire.CodeSiteError:
		f.Heading, f.Advice = "网站返回了错误", "请在浏览器中确认此网址能正常打开，或稍后重试。"
	case e.Code == acquire.CodeTooLarge:
		f.Heading, f.Advice = "页面太大", "页面超过了单次获取的大小上限，请换一个更具体的页面。"
	case e.Code == acquire.CodeUnsupportedContent:
		f.Heading, f.Advice = "不支持这种内容", "此地址返回的不是网页。若是 PDF 文件，请选择「PDF」方式。"
	case e.Code == acquire.CodeJobsUnavailable:
		f.Heading, f.Advice = "本服务器不能运行爬取任务", "爬取任务需要在 zhizhi serve 的任务队列上运行。请联系管理员。"
	case e.Code == acquire.CodeNotFound:
		f.Heading, f.Advice = "没有这个爬取任务", "任务不存在、已过期（结果保留 24 小时），或不是您发起的。"
	case e.Code == acquire.CodeInvalidRequest:
		f.Heading, f.Advice = "请求无效", "请检查网址和选项后重试。"
	case e.Code == "INSUFFICIENT_SCOPE" || e.Code == "UNAUTHORIZED":
		f.Heading, f.Advice = "没有使用获取接口的权限", "工作台需要「操作员」或更高权限，请重新登录或联系系统管理员。"
	default:
		f.Heading, f.Advice = fmt.Sprintf("获取失败（HTTP %d）", status), "请稍后重试；问题持续时请把下面的技术细节告诉系统管理员。"
	}
	return f
}

// callAcquire asks the acquisition API in-process, as the person at the
// console: the request carries their session cookie (the API signs its
// caller in again) and their principal on its context.
func (c *console) callAcquire(r *http.Request, method, path string, body any) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return 0, nil, fmt.Errorf("studio: %w", err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(r.Context(), method, path, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("studio: %w", err)
	}
	req.Host = r.Host
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for _, ck := range r.Cookies() {
		req.AddCookie(ck)
	}
	rec := &answer{header: http.Header{}, status: http.StatusOK}
	start := time.Now()
	c.acquire.ServeHTTP(rec, req)
	c.log.Debug("studio called the acquisition api", "method", method, "path", path, "status", rec.status,
		"elapsed_ms", time.Since(start).Milliseconds())
	if rec.over {
		return 0, nil, fmt.Errorf("studio: %s %s: answer over %d bytes", method, path, studioMaxAnswer)
	}
	return rec.status, rec.body.Bytes(), nil
}

// answer is an in-memory http.ResponseWriter for an in-process call.
type answer struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
	over   bool
}

func (a *answer) Header() http.Header { return a.header }

func (a *answer) WriteHeader(status int) {
	if !a.wrote {
		a.status, a.wrote = status, true
	}
}

func (a *answer) Write(p []byte) (int, error) {
	a.wrote = true
	if a.body.Len()+len(p) > studioMaxAnswer {
		a.over = true
		return 0, io.ErrShortWrite
	}
	return a.body.Write(p)
}

// robotsWord says the acquisition evidence's robots.txt decision in the
// console's words.
func robotsWord(decision string) string {
	switch decision {
	case "allowed":
		return "允许抓取"
	case "":
		return "—"
	}
	if strings.HasPrefix(decision, "not asked") {
		return "未询问网站（取自已存快照）"
	}
	return decision
}
