package api

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"zhizhi/internal/model"
	"zhizhi/internal/store"
	"zhizhi/internal/store/storetest"
)

// TestBodiesRefuseControlCharacters: a control character in any text field
// of any JSON body the API takes — every write route of the route table,
// each string field its openapi.yaml request schema names in turn, set in
// an otherwise valid request — is refused with 400 invalid_request naming
// the field, before anything is written: no audit entry, no target
// changed. A line break is refused in a one-line field and passes in a
// reason.
func TestBodiesRefuseControlCharacters(t *testing.T) {
	st := storetest.SQLite(t)
	w := buildWorld(t, st)
	seedCards(t, w)
	a := newAPITest(t, st, fixedNow)
	ctx := context.Background()
	audit := func() int {
		es, err := st.ListAudit(ctx, store.AuditFilter{Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		return len(es)
	}
	// Some cases' valid requests make what they act on (a takedown to
	// freeze): made first, so that only the refused requests are counted.
	var writes []request
	for _, c := range endpointCases() {
		if rq := c.ok(w); c.write && rq.contentType == "application/json" {
			writes = append(writes, rq)
		}
	}
	before, fgwBefore := audit(), mustTargetByID(t, st, w.tgtFGW)

	send := func(rq request, field string, value any) reply {
		body := map[string]any{}
		if len(rq.body) > 0 {
			if err := json.Unmarshal(rq.body, &body); err != nil {
				t.Fatalf("%s %s: the valid body is not an object: %v", rq.method, rq.target, err)
			}
		}
		body[field] = value
		raw, _ := json.Marshal(body)
		rq.body, rq.token = raw, tokAdmin
		return a.do(rq)
	}
	check := func(rq request, field string, value any, place string) {
		t.Helper()
		res := send(rq, field, value)
		if e := res.errorBody(t); res.status != http.StatusBadRequest || e.Error != "invalid_request" ||
			!strings.HasPrefix(e.Detail, place+": ") || !strings.Contains(e.Detail, "control character") {
			t.Errorf("%s %s with a NUL in %s: %d %+v, want 400 invalid_request naming %s", rq.method, rq.target, place, res.status, e, place)
		}
	}
	fields := 0
	for _, rq := range writes {
		route, _, err := a.router.FindRoute(a.newHTTPRequest(rq))
		if err != nil {
			t.Fatalf("%s %s: %v", rq.method, rq.target, err)
		}
		if route.Operation.RequestBody == nil {
			continue
		}
		schema := route.Operation.RequestBody.Value.Content.Get("application/json").Schema.Value
		for _, name := range slices.Sorted(func(yield func(string) bool) {
			for k := range schema.Properties {
				if !yield(k) {
					return
				}
			}
		}) {
			p := schema.Properties[name].Value
			var value any
			switch {
			case p.Type.Is("string"):
				value = "正常\x00文字"
			case p.Type.Is("array") && p.Items.Value.Type.Is("string"):
				value = []string{"正常\x00文字"}
				name += "[0]"
			case p.Type.Is("object"):
				for inner, ip := range p.Properties {
					if !ip.Value.Type.Is("string") {
						continue
					}
					fields++
					check(rq, name, map[string]any{inner: "正常\x00文字"}, name+"."+inner)
				}
				continue
			default:
				continue
			}
			fields++
			field, _, _ := strings.Cut(name, "[")
			check(rq, field, value, name)
		}
	}
	if fields < 15 {
		t.Errorf("tried %d text fields, want every one (over 15 when this test was written)", fields)
	}

	// One line where one belongs; several in a reason.
	disable := postJSON(idPath("/api/v1/targets/%d/disable", w.tgtFGW), tokAdmin, `{"reason": "x"}`)
	res := send(patchJSON(idPath("/api/v1/targets/%d", w.tgtFGW), tokAdmin, ""), "target_name", "发改局\n文件")
	if e := res.errorBody(t); res.status != http.StatusBadRequest || !strings.HasPrefix(e.Detail, "target_name: ") {
		t.Errorf("a line break in target_name: %d %+v, want 400 naming it", res.status, e)
	}

	if n := audit(); n != before {
		t.Errorf("refused bodies left %d audit entries", n-before)
	}
	if after := mustTargetByID(t, st, w.tgtFGW); after.Enabled != fgwBefore.Enabled || after.TargetName != fgwBefore.TargetName {
		t.Errorf("a refused body changed target %s", after.TargetCode)
	}

	if res := send(disable, "reason", "第一行\r\n第二行\t缩进"); res.status != http.StatusOK {
		t.Errorf("a reason over two lines: %d %s, want 200", res.status, res.body)
	}
}

func mustTargetByID(t *testing.T, st *store.Store, id int64) *model.Target {
	t.Helper()
	tg, err := st.TargetByID(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	return tg
}
