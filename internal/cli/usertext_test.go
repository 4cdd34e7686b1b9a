package cli

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// repoRoot is the repository, seen from this package's directory.
const repoRoot = "../.."

// userText is one piece of text a user reads, and where it comes from.
type userText struct {
	where string
	text  string
	code  bool // command-line text: code spans and blocks of a document, or help
}

// markdownTexts returns README.md and docs/*.md, whole or (code) as their
// code spans and fenced blocks, where commands are written.
func markdownTexts(t *testing.T, code bool) []userText {
	t.Helper()
	files := []string{filepath.Join(repoRoot, "README.md")}
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil || len(docs) == 0 {
		t.Fatalf("no docs/*.md: %v", err)
	}
	files = append(files, docs...)
	var out []userText
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		name, _ := filepath.Rel(repoRoot, f)
		if !code {
			out = append(out, userText{where: name, text: string(b)})
			continue
		}
		for _, c := range codeOf(string(b)) {
			out = append(out, userText{where: name, text: c, code: true})
		}
	}
	return out
}

var (
	fenceRe = regexp.MustCompile("(?ms)^```[a-z]*\n(.*?)^```")
	spanRe  = regexp.MustCompile("`([^`\n]+)`")
)

// codeOf returns the command lines of the fenced blocks (those that start
// with "zhizhi"; a block may also draw a directory or show output) and the
// inline code spans.
func codeOf(md string) []string {
	var out []string
	for _, m := range fenceRe.FindAllStringSubmatch(md, -1) {
		for _, line := range strings.Split(m[1], "\n") {
			if strings.HasPrefix(strings.TrimPrefix(strings.TrimSpace(line), "$ "), "zhizhi ") {
				out = append(out, line)
			}
		}
	}
	for _, m := range spanRe.FindAllStringSubmatch(fenceRe.ReplaceAllString(md, ""), -1) {
		out = append(out, m[1])
	}
	return out
}

// yamlTexts returns every YAML file under demo/config/, comments included.
func yamlTexts(t *testing.T) []userText {
	t.Helper()
	var out []userText
	err := filepath.WalkDir(filepath.Join(repoRoot, "demo", "config"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || (!strings.HasSuffix(p, ".yaml") && !strings.HasSuffix(p, ".yml")) {
			return err
		}
		b, err := os.ReadFile(p)
		name, _ := filepath.Rel(repoRoot, p)
		out = append(out, userText{where: name, text: string(b)})
		return err
	})
	if err != nil || len(out) == 0 {
		t.Fatalf("no demo/config/**/*.yaml: %v", err)
	}
	return out
}

// walk calls fn for root and every command under it.
func walk(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, sub := range c.Commands() {
		walk(sub, fn)
	}
}

// helpTexts returns what `--help` shows for every command: the short and
// long descriptions, the examples and every flag's usage.
func helpTexts(root *cobra.Command) []userText {
	var out []userText
	walk(root, func(c *cobra.Command) {
		where := "`" + c.CommandPath() + " --help`"
		for _, s := range []string{c.Use, c.Short, c.Long, c.Example} {
			out = append(out, userText{where: where, text: s, code: true})
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			out = append(out, userText{where: where + " --" + f.Name, text: f.Usage, code: true})
		})
	})
	return out
}

// goStrings returns every string literal of the program (tests excluded):
// messages, status reasons, help and page text all start as one.
func goStrings(t *testing.T) []userText {
	t.Helper()
	var out []userText
	for _, dir := range []string{"internal", "cmd"} {
		err := filepath.WalkDir(filepath.Join(repoRoot, dir), func(p string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
				return err
			}
			fset := token.NewFileSet()
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				return err
			}
			ast.Inspect(f, func(n ast.Node) bool {
				lit, ok := n.(*ast.BasicLit)
				if !ok || lit.Kind != token.STRING {
					return true
				}
				s, err := strconv.Unquote(lit.Value)
				if err != nil {
					t.Errorf("%s: %v", fset.Position(lit.Pos()), err)
					return true
				}
				pos := fset.Position(lit.Pos())
				name, _ := filepath.Rel(repoRoot, pos.Filename)
				out = append(out, userText{where: name + ":" + strconv.Itoa(pos.Line), text: s})
				return true
			})
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// citation matches what only the project's own design papers explain: a
// seed number ("seed 004", "the seed's"), DESIGN and its sections, an
// issue number. `--seed 7`, the simulated web's content seed, is a flag a
// user types, so a seed right after a dash is not a citation.
var citation = regexp.MustCompile(`(?i:(?:^|[^-])\bseeds?\s+(?:§|\d)|\bseed's\b|\bissue\s+#?\d)|\bDESIGN\b|§`)

// TestUserTextCitesNoDesignPapers: a user has only this repository, not
// the papers it was designed from, so nothing a user reads — README, docs,
// the comments and values of the configuration files, every command's
// help and every string the program prints — sends them to a seed, to
// DESIGN or to an issue.
func TestUserTextCitesNoDesignPapers(t *testing.T) {
	var texts []userText
	texts = append(texts, markdownTexts(t, false)...)
	texts = append(texts, yamlTexts(t)...)
	texts = append(texts, helpTexts(newRootCmd())...)
	texts = append(texts, goStrings(t)...)
	for _, u := range texts {
		for i, line := range strings.Split(u.text, "\n") {
			if m := citation.FindString(line); m != "" {
				t.Errorf("%s (line %d) cites %q: say it in the user's words\n\t%s", u.where, i+1, strings.TrimSpace(m), strings.TrimSpace(line))
			}
		}
	}
}

// Words for the parts of zhizhi that are planned but may not be built yet
// (the long-running server and its health endpoints, garbage collection,
// API keys), looked for in documents and help:
// a user must not be told to use one that is not there. command is the
// command whose existence makes the word fine.
var plannedWords = []struct {
	command string
	re      *regexp.Regexp
}{
	{"serve", regexp.MustCompile(`\bserve\b|/healthz|/readyz`)},
	{"gc", regexp.MustCompile(`\bgc\b`)},
	{"apikey", regexp.MustCompile(`\bapikey\b`)},
}

var (
	invocationRe = regexp.MustCompile(`\bzhizhi((?:[ \t]+[^ \t\n]+)+)`)
	envRe        = regexp.MustCompile(`\bZHIZHI_[A-Z][A-Z0-9_]*`)
)

// TestUserTextNamesOnlyWhatExists: every `zhizhi …` command line in the
// README, the docs, the help and the program's messages names commands and
// flags the binary has; no planned command that is not built is mentioned;
// every ZHIZHI_ setting named is one the program reads.
func TestUserTextNamesOnlyWhatExists(t *testing.T) {
	root := newRootCmd()
	root.InitDefaultVersionFlag()
	walk(root, func(c *cobra.Command) { c.InitDefaultHelpFlag() })

	var texts []userText
	texts = append(texts, markdownTexts(t, false)...)
	texts = append(texts, markdownTexts(t, true)...)
	texts = append(texts, yamlTexts(t)...)
	texts = append(texts, helpTexts(root)...)
	lits := goStrings(t)
	texts = append(texts, lits...)

	read := map[string]bool{}
	for _, l := range lits {
		if envRe.MatchString(l.text) && envRe.FindString(l.text) == l.text {
			read[l.text] = true // a literal that is exactly a setting's name is one the code looks up
		}
	}

	for _, u := range texts {
		for _, line := range strings.Split(u.text, "\n") {
			for _, cl := range commandLines(u, line) {
				for _, m := range invocationRe.FindAllStringSubmatch(cl, -1) {
					if problem := checkInvocation(root, strings.Fields(m[1])); problem != "" {
						t.Errorf("%s: %q: %s", u.where, strings.TrimSpace(m[0]), problem)
					}
				}
			}
			for _, name := range plannedWords {
				if strings.HasPrefix(u.where, "internal") || strings.HasPrefix(u.where, "cmd") {
					break // program strings: the invocations above are what matter
				}
				if _, _, err := root.Find([]string{name.command}); err == nil && name.command != "" {
					continue // built since
				}
				if name.re.MatchString(line) {
					t.Errorf("%s: names %s, which zhizhi does not have\n\t%s", u.where, name.re, strings.TrimSpace(line))
				}
			}
			for _, env := range envRe.FindAllString(line, -1) {
				if !read[env] {
					t.Errorf("%s: %s is not a setting zhizhi reads\n\t%s", u.where, env, strings.TrimSpace(line))
				}
			}
		}
	}
}

// commandLines returns the parts of one line that are written as command
// lines: all of a document's code; in prose, help and messages the
// `quoted` parts; in help also the example lines that start with "zhizhi".
func commandLines(u userText, line string) []string {
	if u.code && !strings.HasPrefix(u.where, "`") {
		return []string{line}
	}
	if strings.HasSuffix(u.where, ".md") {
		return nil // a document's code is checked as code
	}
	var out []string
	for _, m := range spanRe.FindAllStringSubmatch(line, -1) {
		out = append(out, m[1])
	}
	if strings.HasPrefix(u.where, "`") && strings.HasPrefix(strings.TrimSpace(line), "zhizhi ") {
		out = append(out, line) // an example in --help
	}
	return out
}

// checkInvocation follows the words after "zhizhi" down the command tree
// and checks every --flag on the way; it returns what is wrong, or "".
func checkInvocation(root *cobra.Command, words []string) string {
	cmd := root
	args := false // past the command words: the rest are arguments
	for _, w := range words {
		w = strings.Trim(w, "`\"',.;:)")
		switch {
		case w == "|" || w == ">" || w == "&&" || w == "#" || w == "2>&1" || strings.HasPrefix(w, "#"):
			return ""
		case strings.HasPrefix(w, "--"):
			name, _, _ := strings.Cut(strings.TrimPrefix(w, "--"), "=")
			name = strings.TrimRight(name, "]")
			if name == "" || !regexp.MustCompile(`^[a-z][a-z0-9-]*$`).MatchString(name) {
				continue
			}
			if cmd.Flags().Lookup(name) == nil && cmd.InheritedFlags().Lookup(name) == nil {
				return "`" + cmd.CommandPath() + "` has no flag --" + name
			}
		case args || strings.HasPrefix(w, "-") || strings.HasPrefix(w, "["):
		case regexp.MustCompile(`^[a-z][a-z-]*$`).MatchString(w):
			var next *cobra.Command
			for _, c := range cmd.Commands() {
				if c.Name() == w || slices.Contains(c.Aliases, w) {
					next = c
				}
			}
			if next != nil {
				cmd = next
				continue
			}
			if cmd == root {
				return "zhizhi has no command " + w
			}
			if cmd.HasSubCommands() {
				return "`" + cmd.CommandPath() + "` has no subcommand " + w
			}
			args = true
		default:
			if cmd == root {
				return "" // prose: "zhizhi (知止) …", "zhizhi's"
			}
			args = true
		}
	}
	return ""
}
