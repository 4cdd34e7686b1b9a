package config

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryKeyIsDocumented: a user who meets a key in a configuration
// file, or wants one, finds it explained in docs/config.md, in the section
// about that kind of file — named in the prose, not only shown in an
// example. The key lists are the loader's own, so a key added to the
// loader without a word in the docs fails here.
func TestEveryKeyIsDocumented(t *testing.T) {
	b, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	aliases := func(m map[string]string) []string { return slices.Sorted(maps.Keys(m)) }
	cases := []struct {
		what    string
		section string // heading of the section that must explain them
		keys    []string
	}{
		{"site keys", "## Site files", append(slices.Clone(siteKeys), aliases(siteAliases)...)},
		{"site rate keys", "## Site files", rateKeys},
		{"template keys", "### Template sites", templateKeys},
		{"template list keys", "### Template sites", listKeys},
		{"template detail keys", "### Template sites", detailKeys},
		{"template target keys", "### Template sites", targetKeys},
		{"CMS site dept keys", "### CMS-adapter sites", deptKeys},
		{"CMS site column keys", "### CMS-adapter sites", columnKeys},
		{"adapter keys", "## CMS adapter files", adapterKeys},
		{"adapter detect keys", "## CMS adapter files", detectKeys},
		{"adapter request keys", "## CMS adapter files", requestKeys},
		{"adapter index keys", "## CMS adapter files", indexKeys},
		{"adapter list keys", "## CMS adapter files", adapterListKeys},
		{"adapter list fields", "## CMS adapter files", listFieldKeys},
		{"adapter detail keys", "## CMS adapter files", adapterDetailKeys},
		{"adapter dedupe keys", "## CMS adapter files", dedupeKeys},
		{"adapter resilience keys", "## CMS adapter files", append(slices.Clone(resilienceKeys), aliases(resilienceAliases)...)},
		{"adapter escalation keys", "## CMS adapter files", escalateKeys},
		{"adapter site_template keys", "## CMS adapter files", siteTemplateKeys},
		{"department CSV columns", "## Departments", deptColumns},
		{"alerts keys", "## Alerts", alertKeys},
		{"alert webhook keys", "## Alerts", webhookKeys},
		{"alert rules", "## Alerts", alertRuleKeys},
		{"alert success_rate keys", "## Alerts", successRateKeys},
		{"alert challenge_rate keys", "## Alerts", challengeRateKeys},
		{"alert rule toggles", "## Alerts", alertToggleKeys},
		{"webhook kinds", "## Alerts", webhookKinds},
	}
	for _, c := range cases {
		prose := proseOf(t, doc, c.section)
		for _, key := range c.keys {
			if !namesKey(prose, key) {
				t.Errorf("%s: %q is accepted by the loader but not explained under %q in docs/config.md", c.what, key, c.section)
			}
		}
	}
}

// TestAccessIsExplained: `access: summary` is the default and decides
// what zhizhi keeps of a site, so its meaning is spelled out.
func TestAccessIsExplained(t *testing.T) {
	b, err := os.ReadFile("../../docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	prose := proseOf(t, string(b), "### `access`")
	for _, want := range []string{"access: full", "access: summary", "64 KiB", "no attachment", "default"} {
		if !strings.Contains(prose, want) {
			t.Errorf("the section on access does not say %q", want)
		}
	}
}

var fenced = regexp.MustCompile("(?ms)^```.*?^```")

// proseOf returns the section under heading (up to the next heading of
// the same or a higher level), without its fenced examples.
func proseOf(t *testing.T, doc, heading string) string {
	t.Helper()
	doc = fenced.ReplaceAllString(doc, "") // a "# config/…" line in an example is no heading
	start := strings.Index(doc, "\n"+heading)
	if start < 0 {
		t.Fatalf("docs/config.md has no section %q", heading)
	}
	level := strings.Index(heading, " ")
	rest := doc[start+1:]
	end := len(rest)
	for i, line := range strings.SplitAfter(rest, "\n") {
		if i == 0 {
			end = len(line)
			continue
		}
		if h := strings.Index(line, " "); strings.HasPrefix(line, "#") && h > 0 && h <= level && strings.Trim(line[:h], "#") == "" {
			break
		}
		end += len(line)
	}
	return rest[:end]
}

// namesKey reports whether the prose names key in a code span, alone or as
// part of a path or setting (`list.fields`, `rate: {interval_sec: N}`).
// Column headers of the department CSV are written in upper case.
func namesKey(prose, key string) bool {
	word := regexp.MustCompile(`(^|[^A-Za-z0-9_])(` + regexp.QuoteMeta(key) + `|` + regexp.QuoteMeta(strings.ToUpper(key)) + `)([^A-Za-z0-9_]|$)`)
	for _, m := range regexp.MustCompile("`([^`\n]+)`").FindAllStringSubmatch(prose, -1) {
		if word.MatchString(m[1]) {
			return true
		}
	}
	return false
}
