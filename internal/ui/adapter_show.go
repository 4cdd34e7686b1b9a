package ui

import (
	"net/http"
	"path/filepath"
	"sort"

	"zhizhi/internal/config"
	"zhizhi/internal/model"
	"zhizhi/internal/store"
)

type fieldMap struct{ Field, Key string }

type adapterData struct {
	adapterRow
	Fields    []fieldMap
	Selectors []fieldMap
	YAML      yamlFile
	// SiteChecks pairs each site using the adapter with its last check
	// (nil when it was never checked).
	SiteChecks []siteCheck
}

type siteCheck struct {
	Site  model.Site
	Check *store.AdapterCheck
}

// adapterShow is one adapter: how it recognises its CMS, how list items map
// to article fields, and its YAML (read-only).
func (c *console) adapterShow(w http.ResponseWriter, r *http.Request) {
	flash := ""
	if r.URL.Query().Get("checked") != "" {
		flash = "探测完成：各站点首页的识别结果见下方“站点探测”。"
	}
	c.adapterShowWith(w, r, http.StatusOK, r.PathValue("id"), flash, "")
}

// adapterShowWith shows adapter id's page with a flash or an error line.
func (c *console) adapterShowWith(w http.ResponseWriter, r *http.Request, status int, id, flash, msg string) {
	b := c.bundle()
	var a *config.Adapter
	if b != nil {
		a = b.CMS[id]
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
	for _, site := range d.Sites {
		sc := siteCheck{Site: site}
		for i := range d.Checks {
			if d.Checks[i].SiteID == site.ID {
				sc.Check = &d.Checks[i]
			}
		}
		d.SiteChecks = append(d.SiteChecks, sc)
	}
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
	c.render(w, r, status, "adapter", page{Title: "适配器 · " + a.AdapterID, Active: "adapters", Flash: flash, Error: msg, Data: d})
}
