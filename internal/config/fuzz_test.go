package config

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLintSite feeds arbitrary bytes as a site file: lint must report, never
// panic, and every problem must carry the file name.
func FuzzLintSite(f *testing.F) {
	for _, name := range []string{"gd_ref.yaml", "qingcheng.yaml", "gdqy.yaml"} {
		data, err := os.ReadFile(filepath.Join("testdata", "lint_good", "sites", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("- a\n- b\n"))
	f.Add([]byte("site_code: &a x\nsite_name: *a\n<<: {a: 1}\n"))
	f.Add([]byte("depts: [{columns: [{column_id: {x: 1}}]}]\ncms_adapter: gkmlpt\n"))
	dir := f.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "sites"), 0o755); err != nil {
		f.Fatal(err)
	}
	path := filepath.Join(dir, "sites", "x.yaml")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		b, ps := Load(dir)
		for _, p := range ps {
			if p.Pos.File == "" || p.What == "" {
				t.Errorf("problem without file or text: %#v", p)
			}
		}
		for _, s := range b.Sites {
			for _, tg := range s.Targets() {
				_ = tg.Model()
				_ = EffectiveTemplate(s, &tg)
			}
			_ = b.SiteModel(s)
		}
	})
}
