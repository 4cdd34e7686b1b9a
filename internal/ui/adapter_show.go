package ui

import (
	"net/http"
	"path/filepath"
	"sort"

	"zhizhi/internal/config"
)

type fieldMap struct{ Field, Key string }

type adapterData struct {
	adapterRow
	Fields    []fieldMap
	Selectors []fieldMap
	YAML      yamlFile
}

// adapterShow is one adapter: how it recognises its CMS, how list items map
// to article fields, and its YAML (read-only).
func (c *console) adapterShow(w http.ResponseWriter, r *http.Request) {
	b := c.bundle()
	var a *config.Adapter
	if b != nil {
		a = b.CMS[r.PathValue("id")]
	}
	if a == nil {
		c.notFound(w, r, "配置目录中没有这个适配器（或其文件有误，请运行 zhizhi config lint）。")
		return
	}
	rows, err := c.adapterRows(r.Context(), []*config.Adapter{a})
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	d := adapterData{adapterRow: rows[0], YAML: readYAML(a.Path)}
	if rel, err := filepath.Rel(filepath.Dir(c.configDir), a.Path); err == nil {
		d.YAML.Path = filepath.ToSlash(rel)
	}
	for f, k := range a.List.Fields {
		d.Fields = append(d.Fields, fieldMap{f, k})
	}
	sort.Slice(d.Fields, func(i, j int) bool { return d.Fields[i].Field < d.Fields[j].Field })
	dt := a.Detail
	for _, s := range []fieldMap{{"title", dt.Title}, {"body", dt.Body}, {"publish_time", dt.PublishTime},
		{"source", dt.Source}, {"attributes", dt.Attributes}, {"attachments", dt.Attachments}} {
		if s.Key != "" {
			d.Selectors = append(d.Selectors, s)
		}
	}
	c.render(w, r, http.StatusOK, "adapter", page{Title: "适配器 · " + a.AdapterID, Active: "adapters", Data: d})
}
