package ui

import (
	"net/http"
	"regexp"
	"strings"

	"zhizhi/internal/auth"
	"zhizhi/internal/corpus"
	"zhizhi/internal/store"
)

// corpusRoutes are the governed corpus's pages: intake, works and their
// trace, duplicate candidates, releases and search over the active one.
// Anyone signed in reads them; operators take articles in, decide
// candidates, quarantine works, build and verify releases; only admins
// move the active release (activate, roll back).
func (c *console) corpusRoutes(mux *http.ServeMux, v, o, a auth.Role) {
	mux.Handle("GET "+Prefix+"/corpus", c.require(v, c.corpusShow))
	mux.Handle("POST "+Prefix+"/corpus/intake", c.require(o, c.corpusIntake))
	mux.Handle("POST "+Prefix+"/corpus/rules", c.require(o, c.corpusRuleCreate))
	mux.Handle("POST "+Prefix+"/corpus/rules/run", c.require(o, c.corpusRulesRun))
	mux.Handle("GET "+Prefix+"/corpus/works", c.require(v, c.corpusWorkList))
	mux.Handle("GET "+Prefix+"/corpus/works/{id}", c.require(v, c.corpusWorkShow))
	mux.Handle("POST "+Prefix+"/corpus/works/{id}/status", c.require(o, c.corpusWorkStatus))
	mux.Handle("GET "+Prefix+"/corpus/works/{id}/citation", c.require(v, c.corpusCitation))
	mux.Handle("GET "+Prefix+"/corpus/candidates", c.require(v, c.corpusCandidateList))
	mux.Handle("POST "+Prefix+"/corpus/candidates/{id}/decide", c.require(o, c.corpusCandidateDecide))
	mux.Handle("GET "+Prefix+"/corpus/releases", c.require(v, c.releaseList))
	mux.Handle("POST "+Prefix+"/corpus/releases", c.require(o, c.releaseBuild))
	mux.Handle("POST "+Prefix+"/corpus/releases/rollback", c.require(a, c.releaseRollback))
	mux.Handle("GET "+Prefix+"/corpus/releases/{id}", c.require(v, c.releaseShow))
	mux.Handle("POST "+Prefix+"/corpus/releases/{id}/verify", c.require(o, c.releaseVerify))
	mux.Handle("POST "+Prefix+"/corpus/releases/{id}/activate", c.require(a, c.releaseActivate))
	mux.Handle("GET "+Prefix+"/corpus/search", c.require(v, c.corpusSearch))
	mux.Handle("POST "+Prefix+"/articles/{id}/corpus", c.require(o, c.articleIntake))
}

// corpusOff answers a corpus page on a console built without the corpus
// service, and reports whether it did.
func (c *console) corpusOff(w http.ResponseWriter, r *http.Request, active string) bool {
	if c.corpus != nil {
		return false
	}
	c.render(w, r, http.StatusServiceUnavailable, "error", page{Title: "语料库未启用", Active: active,
		Data: errorData{Code: http.StatusServiceUnavailable, Heading: "语料库未启用",
			Message: "此服务进程没有配置语料库。请联系系统管理员。"}})
	return true
}

// workStatusLabel names a work's status, with its badge colour.
func workStatusLabel(s string) badge {
	switch s {
	case store.WorkActive:
		return badge{"正常", "green"}
	case store.WorkFrozen:
		return badge{"已冻结", "red"}
	case store.WorkQuarantined:
		return badge{"已隔离", "orange"}
	case store.WorkMerged:
		return badge{"已合并", "grey"}
	}
	return badge{s, "grey"}
}

var workStatuses = []struct{ Value, Label string }{
	{store.WorkActive, "正常"}, {store.WorkQuarantined, "已隔离"}, {store.WorkFrozen, "已冻结"}, {store.WorkMerged, "已合并"},
}

func reviewLabel(s string) string {
	switch s {
	case store.ReviewNone:
		return "无待审事项"
	case store.ReviewPending:
		return "待人工判定"
	case store.ReviewApproved:
		return "审核通过"
	case store.ReviewRejected:
		return "审核未通过"
	}
	return s
}

func releaseStateLabel(s string) badge {
	switch s {
	case store.ReleaseBuilt:
		return badge{"待校验", "yellow"}
	case store.ReleaseVerified:
		return badge{"已校验", "green"}
	case store.ReleaseFailed:
		return badge{"校验失败", "red"}
	}
	return badge{s, "grey"}
}

func candidateKindLabel(k string) string {
	switch k {
	case "exact":
		return "正文相同"
	case "near":
		return "近似重复"
	case "biblio":
		return "文号与发布机构相同"
	}
	return k
}

func candidateStatusLabel(s string) string {
	switch s {
	case store.CandidateOpen:
		return "待判定"
	case store.CandidateSame:
		return "同一作品"
	case store.CandidateDifferent:
		return "不同作品"
	}
	return s
}

func eventKindLabel(k string) string {
	switch k {
	case "intake":
		return "摄取"
	case "normalize":
		return "规范化"
	case "qa":
		return "质量检查"
	case "rights":
		return "权利"
	case "candidate":
		return "重复候选"
	case "review":
		return "审核"
	case "release":
		return "发布"
	case "takedown":
		return "撤下"
	case "status":
		return "状态变更"
	}
	return k
}

func stepStateLabel(s string) badge {
	switch s {
	case "ok":
		return badge{"通过", "green"}
	case "held":
		return badge{"暂缓", "red"}
	case "missing":
		return badge{"缺少证据", "grey"}
	}
	return badge{s, "grey"}
}

// corpusActor says who acted on the corpus in words: the audit trail's
// actors, and intake rules and the system's own steps.
func corpusActor(actor string) string {
	if n, ok := strings.CutPrefix(actor, "rule:"); ok {
		return "摄取规则 #" + n
	}
	if actor == "system:takedown" {
		return "系统（撤下请求）"
	}
	return auditActor(actor)
}

// segment is a piece of text a page shows plainly, marked (a search
// hit) or as code (an id).
type segment struct {
	Text       string
	Mark, Code bool
}

// workIDPattern finds work ids (newWorkID's "zw" and ten base32 letters)
// inside the corpus's Chinese sentences, to set them as code.
var workIDPattern = regexp.MustCompile(`\bzw[a-z2-7]{10}\b`)

// idSegments cuts s around the work ids it names.
func idSegments(s string) []segment {
	var out []segment
	last := 0
	for _, m := range workIDPattern.FindAllStringIndex(s, -1) {
		if m[0] > last {
			out = append(out, segment{Text: s[last:m[0]]})
		}
		out = append(out, segment{Text: s[m[0]:m[1]], Code: true})
		last = m[1]
	}
	if last < len(s) {
		out = append(out, segment{Text: s[last:]})
	}
	return out
}

// statusDetail is SetCorpusWorkStatus's detail ("active → quarantined;
// review none → pending: why").
var statusDetail = regexp.MustCompile(`^([a-z]+) → ([a-z]+)(?:; review ([a-z]+) → ([a-z]+))?(?:: ([\s\S]*))?$`)

// candidateDetail is DecideCorpusCandidate's detail.
var candidateDetail = regexp.MustCompile(`^重复候选（([a-z]+)）`)

// eventDetail says a provenance event's detail in Chinese: the corpus
// writes most of them so; a status change names its states by code.
func eventDetail(e store.CorpusEvent) string {
	d := e.Detail
	if m := statusDetail.FindStringSubmatch(d); m != nil {
		s := "状态：" + workStatusLabel(m[1]).Label + " → " + workStatusLabel(m[2]).Label
		if m[3] != "" {
			s += "；审核：" + reviewLabel(m[3]) + " → " + reviewLabel(m[4])
		}
		if m[5] != "" {
			s += "；原因：" + m[5]
		}
		return s
	}
	if m := candidateDetail.FindStringSubmatch(d); m != nil {
		return "重复候选（" + candidateKindLabel(m[1]) + "）" + d[len(m[0]):]
	}
	return d
}

// evidenceLink is one piece of evidence as a page shows it: its words, a
// link when the console or the portal has a page for it, and the id or
// hash as code.
type evidenceLink struct {
	Label, Href, Code string
}

// traceEvidence links a trace step's evidence to its pages.
func traceEvidence(e corpus.Evidence) evidenceLink {
	l := evidenceLink{Label: e.Label}
	switch e.Kind {
	case "crawl_log":
		l.Href = Prefix + "/crawl-logs?id=" + e.Ref
	case "ledger_day":
		l.Href = "/ledger?day=" + e.Ref
	case "site":
		l.Href = Prefix + "/sites/" + e.Ref
	case "article":
		l.Href = Prefix + "/articles/" + e.Ref
	case "release":
		l.Href = Prefix + "/corpus/releases/" + e.Ref
	case "candidate":
		l.Href = Prefix + "/corpus/candidates"
	case "warc_record":
		// "WARC response 记录": the record type in words.
		l.Label = "WARC 记录"
		if f := strings.Fields(e.Label); len(f) == 3 {
			l.Label = "WARC 记录（" + warcRecordType(f[1]) + "）"
		}
		l.Code = e.Ref
	case "blob":
		l.Code = e.Ref
	}
	return l
}

// eventEvidence links a provenance event's evidence ("crawl_log:12
// snapshot:ab…", "release:20261206-1", "candidate:3", "text:…").
func eventEvidence(s string) []evidenceLink {
	var out []evidenceLink
	for _, f := range strings.Fields(s) {
		kind, ref, _ := strings.Cut(f, ":")
		switch kind {
		case "crawl_log":
			out = append(out, evidenceLink{Label: "抓取日志 #" + ref, Href: Prefix + "/crawl-logs?id=" + ref})
		case "release":
			out = append(out, evidenceLink{Label: "发布 " + ref, Href: Prefix + "/corpus/releases/" + ref})
		case "candidate":
			out = append(out, evidenceLink{Label: "重复候选 #" + ref, Href: Prefix + "/corpus/candidates?status=all"})
		case "site":
			out = append(out, evidenceLink{Label: "站点", Href: Prefix + "/sites/" + ref, Code: ref})
		case "snapshot":
			out = append(out, evidenceLink{Label: "快照", Code: ref})
		case "text":
			out = append(out, evidenceLink{Label: "正文", Code: ref})
		default:
			out = append(out, evidenceLink{Code: f})
		}
	}
	return out
}

// warcRecordType names a WARC record's type.
func warcRecordType(t string) string {
	switch t {
	case "warcinfo":
		return "文件信息"
	case "request":
		return "请求"
	case "response":
		return "响应"
	case "metadata":
		return "元数据"
	case "resource":
		return "资源"
	case "revisit":
		return "重访"
	}
	return "其他类型"
}
