package ui

import (
	"bytes"
	"html"
	"io"
	"io/fs"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strings"

	"zhizhi/internal/pages"
)

// maxCheckedForm bounds how much of a posted body plainForm reads to check:
// more than any console form takes (the department file is the largest). A
// bigger body is passed on unread-through, for its handler's own limit to
// refuse.
const maxCheckedForm = maxDeptCSV + 128<<10

// formTexts is what the console knows of its forms' fields from its
// templates: which take several lines (a textarea), and the words each is
// labelled with, to name it in a refusal.
type formTexts struct {
	multiline map[string]bool
	files     map[string]bool // file inputs: their content is their reader's to judge
	labels    map[string]string
}

var (
	fieldTag     = regexp.MustCompile(`(?s)<(input|textarea|select)\b[^>]*?\bname="([^"{}]+)"[^>]*>`)
	labelAttr    = regexp.MustCompile(`\b(id|aria-label)="([^"{}]*)"`)
	labelFor     = regexp.MustCompile(`(?s)<label\b[^>]*\bfor="([^"{}]+)"[^>]*>(.*?)</label>`)
	labelOpen    = regexp.MustCompile(`(?s)<label\b[^>]*>([^<]*)$`)
	templateText = regexp.MustCompile(`(?s)\{\{.*?\}\}|<[^>]*>`)
)

// readFormTexts reads every form field of the console's templates.
func readFormTexts(files fs.FS) (*formTexts, error) {
	ff := &formTexts{multiline: map[string]bool{}, files: map[string]bool{}, labels: map[string]string{}}
	err := fs.WalkDir(files, "templates", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".html") {
			return err
		}
		raw, err := fs.ReadFile(files, p)
		if err != nil {
			return err
		}
		src := string(raw)
		forIDs := map[string]string{}
		for _, m := range labelFor.FindAllStringSubmatch(src, -1) {
			forIDs[m[1]] = m[2]
		}
		for _, loc := range fieldTag.FindAllStringSubmatchIndex(src, -1) {
			tag, kind, name := src[loc[0]:loc[1]], src[loc[2]:loc[3]], src[loc[4]:loc[5]]
			if kind == "textarea" {
				ff.multiline[name] = true
			}
			if strings.Contains(tag, `type="file"`) {
				ff.files[name] = true
			}
			if ff.labels[name] != "" {
				continue
			}
			var label string
			for _, a := range labelAttr.FindAllStringSubmatch(tag, -1) {
				switch a[1] {
				case "aria-label":
					label = a[2]
				case "id":
					if l, ok := forIDs[a[2]]; ok && label == "" {
						label = l
					}
				}
			}
			if label == "" {
				if m := labelOpen.FindStringSubmatch(src[max(0, loc[0]-300):loc[0]]); m != nil {
					label = m[1]
				}
			}
			if label = strings.TrimSpace(html.UnescapeString(templateText.ReplaceAllString(label, ""))); label != "" {
				ff.labels[name] = label
			}
		}
		return nil
	})
	return ff, err
}

// badFormMessage says which field was refused, in the words of its label.
func (ff *formTexts) badFormMessage(name string) string {
	switch {
	case !pages.PlainText(name, false):
		name = "（无法显示）"
	case ff.labels[name] != "":
		name = "「" + ff.labels[name] + "」"
	default:
		name = "「" + name + "」"
	}
	return "表单中的" + name + "含有控制字符或无效编码，未做任何修改。请删去这些字符后重新提交。"
}

// plainForm refuses a posted form any of whose fields (or field names)
// holds a control character or invalid UTF-8 — a textarea may hold tabs and
// line breaks — before its handler reads it, so nothing is written: 400 with
// the field named. It reports whether the request may go on; the body is
// given back to the handler as it came. The fields named in lenient are left
// to their handler, which makes a safe value of anything (the login's next
// page).
func (c *console) plainForm(w http.ResponseWriter, r *http.Request, lenient ...string) bool {
	if r.Method == http.MethodGet || r.Method == http.MethodHead || r.Body == nil {
		return true
	}
	mt, params, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != "application/x-www-form-urlencoded" && mt != "multipart/form-data") {
		return true // not a form: its handler refuses it
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, maxCheckedForm+1))
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), r.Body), r.Body}
	if err != nil || len(body) > maxCheckedForm {
		return true // the handler's own limit and parse say what is wrong
	}
	name, bad := "", false
	if mt == "multipart/form-data" {
		name, bad = c.fields.badPart(body, params["boundary"], lenient)
	} else if v, err := url.ParseQuery(string(body)); err == nil {
		name, bad = c.fields.badValue(v, lenient)
	}
	if !bad {
		return true
	}
	c.render(w, r, http.StatusBadRequest, "error", page{Title: "请求无效",
		Data: errorData{Code: http.StatusBadRequest, Heading: "请求无效", Message: c.fields.badFormMessage(name)}})
	return false
}

func (ff *formTexts) badValue(v url.Values, lenient []string) (string, bool) {
	for _, name := range slices.Sorted(maps.Keys(v)) {
		if slices.Contains(lenient, name) || ff.files[name] {
			continue
		}
		if !pages.PlainText(name, false) {
			return name, true
		}
		for _, val := range v[name] {
			if !pages.PlainText(val, ff.multiline[name]) {
				return name, true
			}
		}
	}
	return "", false
}

// badPart checks the text fields of a multipart form; a file's content is
// its reader's to judge (a department file may be GBK).
func (ff *formTexts) badPart(body []byte, boundary string, lenient []string) (string, bool) {
	if boundary == "" {
		return "", false
	}
	mr := multipart.NewReader(bytes.NewReader(body), boundary)
	v := url.Values{}
	for {
		p, err := mr.NextPart()
		if err != nil {
			break // the end, or a malformed body its handler refuses
		}
		name := p.FormName()
		if p.FileName() != "" {
			if !pages.PlainText(name, false) || !pages.PlainText(p.FileName(), false) {
				return name, true
			}
			continue
		}
		val, err := io.ReadAll(p)
		if err != nil {
			break
		}
		v.Add(name, string(val))
	}
	return ff.badValue(v, lenient)
}
