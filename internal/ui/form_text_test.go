package ui

import (
	"bytes"
	"context"
	"go/ast"
	"go/token"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"zhizhi/internal/store"
)

// consoleFormFields is every form field name the console knows: each name
// its templates give a field, and each literal its source reads from a
// posted form (PostFormValue, FormValue, FormFile, PostForm[…], Form[…]).
func consoleFormFields(t *testing.T) []string {
	t.Helper()
	set := map[string]bool{}
	tmpls, err := filepath.Glob(filepath.Join("templates", "*.html"))
	if err != nil {
		t.Fatal(err)
	}
	nameAttr := regexp.MustCompile(`\bname="([a-z_]+)"`)
	for _, p := range tmpls {
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range nameAttr.FindAllStringSubmatch(string(raw), -1) {
			set[m[1]] = true
		}
	}
	lit := func(e ast.Expr) {
		if b, ok := e.(*ast.BasicLit); ok && b.Kind == token.STRING {
			if s, err := strconv.Unquote(b.Value); err == nil && s != "" {
				set[s] = true
			}
		}
	}
	inspectSources(t, func(_ *token.FileSet, n ast.Node) {
		switch n := n.(type) {
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && len(n.Args) == 1 &&
				slices.Contains([]string{"PostFormValue", "FormValue", "FormFile"}, sel.Sel.Name) {
				lit(n.Args[0])
			}
		case *ast.IndexExpr:
			if sel, ok := n.X.(*ast.SelectorExpr); ok && (sel.Sel.Name == "PostForm" || sel.Sel.Name == "Form") {
				lit(n.Index)
			}
		}
	})
	return slices.Sorted(func(yield func(string) bool) {
		for k := range set {
			if !yield(k) {
				return
			}
		}
	})
}

// TestConsoleFormsRefuseControlCharacters: a control character in any
// field of any form the console takes — every POST route its source
// registers, a NUL in each field it knows in turn — is refused with 400 and
// a message in Chinese that names the field, before anything is written: no
// audit entry, no target switched off or added, no host cleared, no
// department imported. A line break is refused in a one-line field and
// passes in a textarea.
func TestConsoleFormsRefuseControlCharacters(t *testing.T) {
	w := sqliteWorld(t)
	ctx := context.Background()
	admin := w.login(t, "admin")
	fields := consoleFormFields(t)
	if len(fields) < 40 {
		t.Fatalf("found %d form fields, want every one (over 40 when this test was written): %v", len(fields), fields)
	}
	audit := func() int {
		es, err := w.st.ListAudit(ctx, store.AuditFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	targets := func() int {
		ts, err := w.st.ListTargets(ctx, store.TargetFilter{})
		if err != nil {
			t.Fatal(err)
		}
		return len(ts)
	}
	depts := func() int {
		ds, err := w.st.ListDepartments(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return len(ds)
	}
	auditBefore, targetsBefore, deptsBefore := audit(), targets(), depts()

	// Values every form would accept, so that only the control character
	// stands between a request and a change.
	base := url.Values{}
	for _, f := range fields {
		base.Set(f, "1")
	}
	for k, v := range map[string]string{"enabled": "0", "reason": "测试", "field": "enabled", "back": "targets",
		"target_code": "nul_test", "target_name": "测试栏目", "entry_url": "http://www.healthy.gov.test/list/",
		"site_code": "news", "username": "admin", "password": "pw-admin", "next": "/admin/",
		"summary": "改写后的摘要", "urls": "http://www.healthy.gov.test/", "requester": "某单位", "contact": "电话",
		"scope": "site", "schedule": "0 8 * * *", "schedule_cron": "0 8 * * *"} {
		base.Set(k, v)
	}
	values := map[string]string{"code": "lianzhou_tzgg", "host": hostCaptcha, "id": "1"}
	wildcard := regexp.MustCompile(`\{([a-z]+)(\.\.\.)?\}`)
	csv, err := os.ReadFile(filepath.Join(w.cfgDir, "departments.csv"))
	if err != nil {
		t.Fatal(err)
	}

	send := func(method, path string, form url.Values, multipartForm bool) *httptest.ResponseRecorder {
		var body bytes.Buffer
		ctype := "application/x-www-form-urlencoded"
		if multipartForm {
			mw := multipart.NewWriter(&body)
			for _, k := range slices.Sorted(func(yield func(string) bool) {
				for k := range form {
					if !yield(k) {
						return
					}
				}
			}) {
				if k == "file" {
					fw, _ := mw.CreateFormFile("file", "departments.csv")
					fw.Write(csv)
					continue
				}
				mw.WriteField(k, form.Get(k))
			}
			mw.Close()
			ctype = mw.FormDataContentType()
		} else {
			body.WriteString(form.Encode())
		}
		req := httptest.NewRequest(method, path, &body)
		req.Header.Set("Content-Type", ctype)
		req.AddCookie(admin)
		rec := httptest.NewRecorder()
		w.h.ServeHTTP(rec, req)
		return rec
	}

	routes := 0
	for _, pattern := range consoleRoutes(t) {
		method, path, ok := strings.Cut(pattern, " ")
		if !ok || method == http.MethodGet || method == http.MethodHead {
			continue
		}
		routes++
		path = wildcard.ReplaceAllStringFunc(path, func(m string) string {
			v, ok := values[wildcard.FindStringSubmatch(m)[1]]
			if !ok {
				t.Fatalf("%s: no value for %s in this test", pattern, m)
			}
			return v
		})
		for _, field := range fields {
			form := url.Values{}
			for k, v := range base {
				form[k] = slices.Clone(v)
			}
			if field == "file" {
				continue // a file's content is its reader's to judge
			}
			if path == Prefix+"/login" && field == "next" {
				continue // any next page is made safe (TestLoginGoesOnOnlyToConsolePages)
			}
			form.Set(field, "正常\x00文字")
			rec := send(method, path, form, path == Prefix+"/departments/import")
			if body := rec.Body.String(); rec.Code != http.StatusBadRequest || !strings.Contains(body, "含有控制字符") {
				t.Errorf("%s %s with a NUL in %s: status %d, want 400 saying the field holds a control character", method, path, field, rec.Code)
			}
		}
	}
	if routes < 20 {
		t.Errorf("found %d console POST routes, want every one (over 20 when this test was written)", routes)
	}

	// The message names the field in the words of its label, and a line
	// break is refused where only one line belongs.
	news, err := w.st.SiteByCode(ctx, "news")
	if err != nil {
		t.Fatal(err)
	}
	takedown := func(requester, reason string) url.Values {
		return url.Values{"site_id": {strconv.FormatInt(news.ID, 10)}, "scope": {"site"}, "requester": {requester},
			"contact": {"0763-1234567"}, "reason": {reason}}
	}
	for _, requester := range []string{"北江\x1b新闻网", "北江\n新闻网"} {
		rec := send(http.MethodPost, Prefix+"/takedowns", takedown(requester, "理由"), false)
		if body := rec.Body.String(); rec.Code != http.StatusBadRequest || !strings.Contains(body, "「提出人（单位）」含有控制字符") {
			t.Errorf("requester %q: status %d, want 400 naming 「提出人（单位）」", requester, rec.Code)
		}
	}

	if n := audit(); n != auditBefore {
		t.Errorf("refused forms left %d audit entries", n-auditBefore)
	}
	if n := targets(); n != targetsBefore {
		t.Errorf("refused forms changed the number of targets from %d to %d", targetsBefore, n)
	}
	if n := depts(); n != deptsBefore {
		t.Errorf("refused forms changed the number of departments from %d to %d", deptsBefore, n)
	}
	if tg := mustTarget(t, w.st, "lianzhou_tzgg"); !tg.Enabled {
		t.Error("a refused form switched a target off")
	}
	assertStillBlocked(t, w)

	// A textarea keeps its line breaks: a takedown's reason over two lines
	// is not refused for them.
	if rec := send(http.MethodPost, Prefix+"/takedowns", takedown("北江新闻网", "第一行\r\n第二行\t缩进"), false); strings.Contains(rec.Body.String(), "含有控制字符") {
		t.Errorf("line breaks in a textarea were refused as control characters: status %d", rec.Code)
	}
}
