package ui

import "strings"

// auditObjects names the kinds of object the audit trail records, as the
// staff call them.
var auditObjects = map[string]string{
	"adapter":            "适配器",
	"apikey":             "API 密钥",
	"article":            "文章",
	"card":               "卡片",
	"corpus_work":        "语料作品",
	"corpus_release":     "语料发布",
	"corpus_candidate":   "重复候选",
	"corpus_intake_rule": "摄取规则",
	"corpus_intake":      "语料摄取",
	"department":         "部门",
	"host":               "主机",
	"onboard_run":        "新站接入",
	"takedown":           "下架请求",
	"target":             "目标",
	"user":               "用户",
}

// auditVerbs names what was done, after the object: "目标·新建".
var auditVerbs = map[string]string{
	"create":      "新建",
	"update":      "修改",
	"disable":     "停用",
	"enable":      "启用",
	"subscribe":   "订阅栏目",
	"unsubscribe": "退订栏目",
	"revert":      "恢复旧版本",
	"crawl_now":   "立即采集",
	"clear":       "解除封锁",
	"add":         "添加",
	"role":        "更改角色",
	"passwd":      "重设密码",
	"rewrite":     "改写摘要",
	"revoke":      "吊销",
	"record":      "登记",
	"freeze":      "冻结",
	"import":      "导入",
	"start":       "开始",
	"export":      "导出",
	"detect":      "检测",
	"budget":      "更改预算",
}

// auditObject is the Chinese name of an object type; an unknown one is
// shown as recorded.
func auditObject(code string) string {
	if s, ok := auditObjects[code]; ok {
		return s
	}
	return code
}

// corpusActions are the corpus's action codes, which name their object
// in two words ("corpus.release.activate").
var corpusActions = map[string]string{
	"corpus.intake":           "语料库·收入文章",
	"corpus.rule.create":      "摄取规则·新建",
	"corpus.candidate.decide": "重复候选·判定",
	"corpus.work.status":      "语料作品·更改状态",
	"corpus.work.review":      "语料作品·审核",
	"corpus.work.takedown":    "语料作品·撤下冻结",
	"corpus.release.build":    "语料发布·生成",
	"corpus.release.verify":   "语料发布·校验",
	"corpus.release.activate": "语料发布·启用",
	"corpus.release.rollback": "语料发布·回滚",
}

// auditAction says an action code ("target.create") in words
// ("目标·新建"). A code this table does not know is shown as recorded
// rather than guessed at.
func auditAction(code string) string {
	if s, ok := corpusActions[code]; ok {
		return s
	}
	obj, verb, ok := strings.Cut(code, ".")
	o, okObj := auditObjects[obj]
	v, okVerb := auditVerbs[verb]
	if !ok || !okObj || !okVerb {
		return code
	}
	return o + "·" + v
}

// auditActor says who acted ("user:wangfang", "cli:root",
// "apikey:7(alice)", "system") in words: 用户 wangfang, 命令行 root,
// API 密钥 7（alice）, 系统.
func auditActor(actor string) string {
	kind, name, ok := strings.Cut(actor, ":")
	if !ok {
		if actor == "system" {
			return "系统"
		}
		return actor
	}
	switch kind {
	case "user":
		return "用户 " + name
	case "cli":
		return "命令行 " + name
	case "apikey":
		if id, owner, ok := strings.Cut(strings.TrimSuffix(name, ")"), "("); ok {
			return "API 密钥 " + id + "（" + owner + "）"
		}
		return "API 密钥 " + name
	}
	return actor
}

// auditActorCode reads an actor as a person types it in the filter — in
// words as the page shows them (用户 wangfang, 命令行 root, 系统,
// API 密钥 7（alice）) or as recorded (user:wangfang) — back to the
// recorded form.
func auditActorCode(s string) string {
	s = strings.TrimSpace(s)
	if s == "系统" {
		return "system"
	}
	for _, k := range []struct{ words, code string }{{"用户", "user"}, {"命令行", "cli"}, {"API 密钥", "apikey"}} {
		name, ok := strings.CutPrefix(s, k.words)
		if !ok {
			continue
		}
		name = strings.TrimSpace(name)
		if name == "" {
			return s
		}
		if k.code == "apikey" {
			name = strings.NewReplacer("（", "(", "）", ")").Replace(name)
			name = strings.ReplaceAll(name, " (", "(")
		}
		return k.code + ":" + name
	}
	return s
}

// plainJSON undoes the HTML-safe escapes encoding/json writes for <, > and
// & (\u003c, \u003e, \u0026), so a stored "<script>" reads as written; the
// page's template escapes it for HTML. An escaped backslash before "u003c"
// is kept as it is.
func plainJSON(s string) string {
	if !strings.Contains(s, `\u00`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		if s[i+1] == 'u' && i+6 <= len(s) {
			switch s[i+2 : i+6] {
			case "003c", "003C":
				b.WriteByte('<')
				i += 5
				continue
			case "003e", "003E":
				b.WriteByte('>')
				i += 5
				continue
			case "0026":
				b.WriteByte('&')
				i += 5
				continue
			}
		}
		b.WriteByte(s[i])
		b.WriteByte(s[i+1])
		i++
	}
	return b.String()
}
