package adapter

import (
	"fmt"
	"net/url"
	"path"
	"strconv"
	"strings"

	"zhizhi/internal/config"
	"zhizhi/internal/extract"
)

// Column is one node of a gkmlpt classify tree.
type Column struct {
	ID        string
	Name      string // trailing white space removed
	Path      string // names from the root, joined by ｜
	ParentID  string
	PostCount int
	JumpURL   string
}

// GkmlptIndex is what a dept's gkmlpt index page declares.
type GkmlptIndex struct {
	SID     string
	Columns []Column // the whole tree, depth first
}

// FindJSAssignment returns the object literal assigned to name in a page's
// inline scripts ("window._CONFIG = {…}"), parsed.
func FindJSAssignment(html, name string) (any, error) {
	i := 0
	for {
		j := strings.Index(html[i:], name)
		if j < 0 {
			return nil, fmt.Errorf("%s not found in the page", name)
		}
		i += j + len(name)
		rest := strings.TrimLeft(html[i:], " \t\r\n")
		if !strings.HasPrefix(rest, "=") || strings.HasPrefix(rest, "==") {
			continue
		}
		rest = strings.TrimLeft(rest[1:], " \t\r\n")
		v, _, err := ParseJSObject(rest)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return v, nil
	}
}

// ParseGkmlptIndex reads the SID and the classify TREE from a gkmlpt index
// page.
func ParseGkmlptIndex(html []byte, configVar string) (*GkmlptIndex, error) {
	if configVar == "" {
		configVar = "window._CONFIG"
	}
	v, err := FindJSAssignment(string(html), configVar)
	if err != nil {
		return nil, fmt.Errorf("gkmlpt index: %w", err)
	}
	m, ok := v.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("gkmlpt index: %s is not an object", configVar)
	}
	idx := &GkmlptIndex{SID: scalar(m["SID"])}
	if idx.SID == "" {
		return nil, fmt.Errorf("gkmlpt index: %s has no SID", configVar)
	}
	tree, _ := m["TREE"].([]any)
	if tree == nil {
		return nil, fmt.Errorf("gkmlpt index: %s has no TREE", configVar)
	}
	var walk func(nodes []any, parentID, parentPath string, depth int)
	walk = func(nodes []any, parentID, parentPath string, depth int) {
		if depth > 16 {
			return
		}
		for _, n := range nodes {
			node, ok := n.(map[string]any)
			if !ok {
				continue
			}
			c := Column{
				ID:       scalar(node["id"]),
				Name:     strings.TrimRight(scalar(node["name"]), " \t\u3000"),
				ParentID: parentID,
				JumpURL:  scalar(node["jump_url"]),
			}
			c.PostCount, _ = strconv.Atoi(scalar(node["post_count"]))
			c.Path = c.Name
			if parentPath != "" {
				c.Path = parentPath + "｜" + c.Name
			}
			if c.ID != "" {
				idx.Columns = append(idx.Columns, c)
			}
			if kids, ok := node["children"].([]any); ok {
				walk(kids, c.ID, c.Path, depth+1)
			}
		}
	}
	walk(tree, "", "", 0)
	return idx, nil
}

// Classify is the column summary a gkmlpt list answer carries.
type Classify struct {
	ID        string
	Name      string
	PostCount int
}

// ParseGkmlptList reads one page of the gkmlpt list API with the field
// mapping of the adapter contract.
func ParseGkmlptList(body []byte, pageURL *url.URL, l config.AdapterList) (ListPage, Classify, error) {
	doc, err := decodeJSON(body)
	if err != nil {
		return ListPage{}, Classify{}, fmt.Errorf("gkmlpt list: %w", err)
	}
	if m, ok := doc.(map[string]any); ok {
		if e := scalar(m["error"]); e != "" {
			return ListPage{}, Classify{}, fmt.Errorf("gkmlpt list: the API answered error %q", e)
		}
	}
	itemsPath := l.ItemsPath
	if itemsPath == "" {
		itemsPath = "articles"
	}
	raw, ok := lookup(doc, itemsPath)
	if !ok {
		return ListPage{}, Classify{}, fmt.Errorf("gkmlpt list: no %q in the answer", itemsPath)
	}
	arr, ok := raw.([]any)
	if !ok && raw != nil {
		return ListPage{}, Classify{}, fmt.Errorf("gkmlpt list: %q is not an array", itemsPath)
	}
	var page ListPage
	if l.TotalPath != "" {
		if t, ok := lookup(doc, l.TotalPath); ok {
			page.Total, _ = strconv.Atoi(scalar(t))
		}
	}
	var cls Classify
	if l.ClassifyPath != "" {
		if c, ok := lookup(doc, l.ClassifyPath); ok {
			if cm, ok := c.(map[string]any); ok {
				cls.ID = scalar(cm["id"])
				cls.Name = strings.TrimRight(scalar(cm["name"]), " \t\u3000")
				cls.PostCount, _ = strconv.Atoi(scalar(cm["post_count"]))
			}
		}
	}
	field := func(item map[string]any, name string) any {
		key := l.Fields[name]
		if key == "" {
			return nil
		}
		v, _ := lookup(item, key)
		return v
	}
	for _, x := range arr {
		item, ok := x.(map[string]any)
		if !ok {
			continue
		}
		li := ListItem{Fields: map[string]string{}}
		li.NativePostID = scalar(field(item, "native_post_id"))
		li.Title = extract.CleanText(scalar(field(item, "title")))
		if u := scalar(field(item, "url")); u != "" && pageURL != nil {
			if abs, err := extract.Resolve(pageURL, u); err == nil {
				li.URL = abs.String()
			}
		}
		for name := range l.Fields {
			switch name {
			case "native_post_id", "title", "url", "attachments", "abolished":
				continue
			}
			if v := scalar(field(item, name)); v != "" {
				li.Fields[name] = v
			}
		}
		li.Date = li.Fields["publish_time"]
		li.Abolished = scalar(field(item, "abolished")) == "true" || scalar(field(item, "abolished")) == "1"
		if atts, ok := field(item, "attachments").([]any); ok {
			for _, a := range atts {
				am, ok := a.(map[string]any)
				if !ok {
					continue
				}
				ref := AttachmentRef{Name: extract.CleanText(scalar(am["name"]))}
				if u := scalar(am["url"]); u != "" && pageURL != nil {
					if abs, err := extract.Resolve(pageURL, u); err == nil {
						ref.URL = abs.String()
					}
				}
				ref.Size, _ = strconv.ParseInt(scalar(am["size"]), 10, 64)
				ref.Ext = attachmentExt(ref.Name, ref.URL, scalar(am["type"]))
				if ref.URL != "" {
					li.Attachments = append(li.Attachments, ref)
				}
			}
		}
		if li.URL == "" {
			continue // an item without a detail URL can't be fetched
		}
		page.Items = append(page.Items, li)
	}
	return page, cls, nil
}

// attachmentExt picks a lower-case extension from the name, the URL or a
// declared type, in that order.
func attachmentExt(name, rawURL, declared string) string {
	for _, s := range []string{name, urlPath(rawURL)} {
		if e := strings.TrimPrefix(strings.ToLower(path.Ext(s)), "."); e != "" && len(e) <= 8 {
			return e
		}
	}
	return strings.ToLower(strings.TrimPrefix(declared, "."))
}

func urlPath(raw string) string {
	if u, err := url.Parse(raw); err == nil {
		return u.Path
	}
	return raw
}
