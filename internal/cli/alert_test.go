package cli

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"zhizhi/internal/alert"
)

// TestAlertTestCommand is `zhizhi alert test` against a local receiver
// standing in for a Feishu bot, a WeCom robot whose key is wrong and a
// JSON endpoint, plus a webhook whose address variable is not set: each
// working webhook gets one test message titled 【知止测试】, each row says
// whether it was delivered, and the command exits 1 because two were not;
// with working webhooks only it exits 0; without alerts.yaml, or with an
// error in it, it exits 2.
func TestAlertTestCommand(t *testing.T) {
	waitBound(t)
	if testing.Short() {
		t.Skip("builds the binary")
	}
	var (
		mu  sync.Mutex
		got = map[string][][]byte{}
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		mu.Lock()
		got[r.URL.Path] = append(got[r.URL.Path], body)
		mu.Unlock()
		switch r.URL.Path {
		case "/feishu":
			io.WriteString(w, `{"code":0,"msg":"success","data":{}}`)
		case "/wecom":
			// What WeCom answers for a robot key that does not exist.
			io.WriteString(w, `{"errcode":93000,"errmsg":"invalid webhook url, hint: [1700000000_1_abc]"}`)
		default:
			w.WriteHeader(http.StatusNoContent)
		}
	}))
	defer srv.Close()
	take := func() map[string][][]byte {
		mu.Lock()
		defer mu.Unlock()
		out := got
		got = map[string][][]byte{}
		return out
	}

	dir := t.TempDir()
	env := []string{"ZHIZHI_CONFIG_DIR=" + dir, "ZHIZHI_DATA_DIR=" + filepath.Join(dir, "data")}
	write := func(yaml string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(dir, "alerts.yaml"), []byte(yaml), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	good := "webhooks:\n" +
		"  - {name: ops-feishu, kind: feishu, url: " + srv.URL + "/feishu}\n" +
		"  - {name: ops-json, kind: json, url: " + srv.URL + "/json}\n"
	write(good +
		"  - {name: ops-wecom, kind: wecom, url: " + srv.URL + "/wecom}\n" +
		"  - {name: ops-unset, kind: feishu, url_env: ZHIZHI_TEST_UNSET_WEBHOOK_URL}\n")

	r := runZhizhi(t, env, "alert", "test")
	if r.code != 1 {
		t.Fatalf("with a wrong and an unset webhook: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	for name, wantRow := range map[string]string{
		"ops-feishu": "已送达", "ops-json": "已送达",
		"ops-wecom": "失败", "ops-unset": "失败",
	} {
		row := lineWith(r.stdout, name)
		if !strings.Contains(row, wantRow) {
			t.Errorf("row of %s: %q, want %s\n%s", name, row, wantRow, r.stdout)
		}
	}
	if row := lineWith(r.stdout, "ops-wecom"); !strings.Contains(row, "93000") {
		t.Errorf("the WeCom failure does not give WeCom's errcode: %q", row)
	}
	if row := lineWith(r.stdout, "ops-unset"); !strings.Contains(row, "ZHIZHI_TEST_UNSET_WEBHOOK_URL") {
		t.Errorf("the unset webhook's row does not name its variable: %q", row)
	}
	if !strings.Contains(r.stderr, "2 of 4") {
		t.Errorf("stderr does not say how many failed: %s", r.stderr)
	}
	if strings.Contains(r.stdout+r.stderr, srv.URL) {
		t.Errorf("a webhook address (a credential) was printed:\n%s\n%s", r.stdout, r.stderr)
	}
	sent := take()
	for _, path := range []string{"/feishu", "/json", "/wecom"} {
		if len(sent[path]) != 1 {
			t.Errorf("%s received %d messages, want 1", path, len(sent[path]))
		}
	}
	var feishu struct {
		MsgType string `json:"msg_type"`
		Content struct {
			Post map[string]struct {
				Title string `json:"title"`
			} `json:"post"`
		} `json:"content"`
	}
	if len(sent["/feishu"]) == 1 {
		if err := json.Unmarshal(sent["/feishu"][0], &feishu); err != nil || feishu.MsgType != "post" ||
			!strings.HasPrefix(feishu.Content.Post["zh_cn"].Title, "【知止测试】") {
			t.Errorf("feishu got %s, want a post titled 【知止测试】…", sent["/feishu"][0])
		}
	}
	if len(sent["/json"]) == 1 {
		var n alert.Notification
		if err := json.Unmarshal(sent["/json"][0], &n); err != nil || n.State != "test" || n.Webhook != "ops-json" ||
			!strings.HasPrefix(n.Title, "【知止测试】") || len(n.Lines) == 0 {
			t.Errorf("json webhook got %s, want a test message", sent["/json"][0])
		}
	}

	write(good)
	if r := runZhizhi(t, env, "alert", "test"); r.code != 0 || !strings.Contains(r.stdout, "全部 2 个通道已送达") {
		t.Errorf("with working webhooks only: exit %d, want 0\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, r.stderr)
	}
	take()

	write(good + "  - {name: ops-typo, kind: feishoo, url: " + srv.URL + "/feishu}\n")
	r = runZhizhi(t, env, "alert", "test")
	if r.code != 2 || !strings.Contains(r.stderr, "alerts.yaml") {
		t.Errorf("with an error in alerts.yaml: exit %d, want 2 naming the file\nstderr:\n%s", r.code, r.stderr)
	}
	if err := os.Remove(filepath.Join(dir, "alerts.yaml")); err != nil {
		t.Fatal(err)
	}
	if r := runZhizhi(t, env, "alert", "test"); r.code != 2 || !strings.Contains(r.stderr, "alerts.yaml does not exist") {
		t.Errorf("without alerts.yaml: exit %d, want 2\nstderr:\n%s", r.code, r.stderr)
	}
	if n := len(take()); n != 0 {
		t.Errorf("runs that refused sent %d messages", n)
	}
}
