package ui

import (
	"os"
	"sort"

	"zhizhi/internal/config"
)

// maxYAMLBytes bounds a YAML file shown on a page; config files are small,
// and a huge one is cut rather than sent whole.
const maxYAMLBytes = 256 << 10

// bundle loads the configuration directory as it is on disk now, problems
// and all: the console shows the templates, it does not judge them (that
// is `zhizhi config lint`). Nil when no directory is configured.
func (c *console) bundle() *config.Bundle {
	if c.configDir == "" {
		return nil
	}
	b, _ := config.Load(c.configDir)
	return b
}

// yamlFile is a config file shown read-only.
type yamlFile struct {
	Path string
	Text string
	Cut  bool   // longer than maxYAMLBytes: only the start is shown
	Err  string // why it could not be shown
}

func readYAML(path string) yamlFile {
	f := yamlFile{Path: path}
	raw, err := os.ReadFile(path)
	if err != nil {
		f.Err = "无法读取该文件：" + err.Error()
		return f
	}
	if len(raw) > maxYAMLBytes {
		raw, f.Cut = raw[:maxYAMLBytes], true
	}
	f.Text = string(raw)
	return f
}

func siteFile(b *config.Bundle, code string) *config.SiteFile {
	if b == nil {
		return nil
	}
	for _, s := range b.Sites {
		if s != nil && s.SiteCode == code {
			return s
		}
	}
	return nil
}

// adapters returns the bundle's adapters that parsed, by id.
func adapters(b *config.Bundle) []*config.Adapter {
	if b == nil {
		return nil
	}
	var out []*config.Adapter
	for _, a := range b.CMS {
		if a != nil {
			out = append(out, a)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].AdapterID < out[j].AdapterID })
	return out
}
