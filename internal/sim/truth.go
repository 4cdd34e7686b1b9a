package sim

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"
	"strings"
	"time"
)

// TruthArticle is what a perfect crawler would store for one live article.
// Canonical fields hold what the article's own page shows (empty when the
// site doesn't print that attribute); dates are YYYY-MM-DD.
type TruthArticle struct {
	URL           string    `json:"url"`
	Host          string    `json:"host"`
	SiteCode      string    `json:"site_code"`
	DeptPath      string    `json:"dept_path,omitempty"`
	ColumnID      string    `json:"column_id"`
	ColumnName    string    `json:"column_name"`
	TargetCode    string    `json:"target_code"` // the bundled config's target; empty if not configured
	NativePostID  string    `json:"native_post_id,omitempty"`
	Title         string    `json:"title"`
	IndexNo       string    `json:"index_no"`
	DocNo         string    `json:"doc_no"`
	Publisher     string    `json:"publisher"`
	PublishDate   string    `json:"publish_date"`
	EffectiveDate string    `json:"effective_date"`
	TopicWords    string    `json:"topic_words"`
	OpenCategory  string    `json:"open_category"`
	PublishTime   time.Time `json:"publish_time"`  // UTC
	ModifiedTime  time.Time `json:"modified_time"` // UTC; changes when the article is edited
	Version       int       `json:"version"`
	// BodyText is one line per paragraph or heading and one line per table
	// row (cells joined by a space); compare after removing white space.
	BodyText string `json:"body_text"`
	// RawAttributes are the attribute labels exactly as printed (without the
	// trailing colon) and their values.
	RawAttributes    map[string]string `json:"raw_attributes"`
	Attachments      []TruthAttachment `json:"attachments"`
	Abolished        bool              `json:"abolished"`
	RobotsDisallowed bool              `json:"robots_disallowed"`
	Access           string            `json:"access"` // full | summary, as configured
}

// TruthAttachment is one attachment file.
type TruthAttachment struct {
	URL    string `json:"url"`
	Name   string `json:"name"`
	Ext    string `json:"ext"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256"`
	// Lines are the text lines a PDF carries (page breaks and line wraps
	// aside), for checking what a reader extracts; empty for other files.
	Lines []string `json:"lines,omitempty"`
}

// canonicalLabel maps a normalized label to its canonical field.
var canonicalLabel = map[string]string{
	"索引号": "index_no", "信息索引": "index_no",
	"文号": "doc_no", "发文字号": "doc_no",
	"发布机构": "publisher", "发文机关": "publisher", "发文机构": "publisher", "发布单位": "publisher",
	"发布日期": "publish_date", "发布时间": "publish_date",
	"成文日期": "effective_date", "生成日期": "effective_date", "发文日期": "effective_date",
	"主题词": "topic_words", "关键词": "topic_words",
	"分类": "open_category", "主题分类": "open_category", "信息类别": "open_category", "公开分类": "open_category",
}

// normLabel removes every white space, U+3000 included, and a trailing colon.
func normLabel(l string) string {
	l = strings.Map(func(r rune) rune {
		if r == ' ' || r == '\u3000' || r == '\t' || r == '\n' || r == '\u00a0' {
			return -1
		}
		return r
	}, l)
	return strings.TrimRight(l, "：:")
}

// Truth lists every live article of every site, in a fixed order.
func (w *World) Truth() []TruthArticle {
	w.mu.RLock()
	defer w.mu.RUnlock()
	out := []TruthArticle{}
	for _, s := range w.sites {
		for _, a := range s.allArticles() {
			out = append(out, w.truthOf(s, a))
		}
	}
	return out
}

func (w *World) truthOf(s *site, a *article) TruthArticle {
	c := a.Column
	t := TruthArticle{
		URL: "http://" + s.Host + a.Path, Host: s.Host, SiteCode: s.Code, DeptPath: c.dept.Path,
		ColumnID: c.ID, ColumnName: c.Name, TargetCode: c.TargetCode, Title: a.Title,
		PublishTime: a.Published.UTC(), ModifiedTime: a.Modified.UTC(), Version: a.Version,
		BodyText: blocksText(a.Blocks), RawAttributes: map[string]string{},
		Attachments: []TruthAttachment{}, Abolished: a.Abolished,
		RobotsDisallowed: w.robotsDisallowed(s, a.Path), Access: "full",
	}
	if s.Kind == kindGkmlpt {
		t.NativePostID = strconv.Itoa(a.ID)
	}
	if s.Kind == kindNews {
		t.Access = "summary"
	}
	for _, p := range attributes(s, a) {
		t.RawAttributes[p.Label] = p.Value
		switch canonicalLabel[normLabel(p.Label)] {
		case "index_no":
			t.IndexNo = p.Value
		case "doc_no":
			t.DocNo = p.Value
		case "publisher":
			t.Publisher = p.Value
		case "publish_date":
			t.PublishDate = isoDate(a.Published)
		case "effective_date":
			t.EffectiveDate = isoDate(a.Effective)
		case "topic_words":
			t.TopicWords = p.Value
		case "open_category":
			t.OpenCategory = p.Value
		}
	}
	for _, f := range a.Attachments {
		sum := sha256.Sum256(f.data)
		t.Attachments = append(t.Attachments, TruthAttachment{
			URL: "http://" + s.Host + f.Path, Name: f.Name, Ext: f.Ext, Size: len(f.data), SHA256: hex.EncodeToString(sum[:]),
			Lines: pdfLines(f),
		})
	}
	return t
}

func pdfLines(f *attachment) []string {
	if f.Ext != "pdf" {
		return nil
	}
	return append([]string(nil), f.Lines...)
}
