package sim

import (
	"time"
)

// siteKind selects how a site renders its pages.
type siteKind int

const (
	kindGkmlpt   siteKind = iota // gkmlpt CMS: _CONFIG index, JSON list API, post_{id}.html
	kindLianzhou                 // GB18030 template site, index.html/index_1.html lists
	kindGD                       // provincial reference, dl/dt/dd attributes, next links
	kindGov                      // national reference, JSON feed lists, th/td attributes
	kindNews                     // non-government news site with long articles and images
)

// Control host: the sim's own endpoints (truth, clock, faults, log).
const ControlHost = "sim.gov.test"

// site is one simulated host.
type site struct {
	Host      string
	Code      string
	Name      string
	City      string // the place titles name: 清远市, 连州市, … ("" for the national portal)
	Mark      string // 网站标识码 in the footer of TRS-style pages
	county    int    // 1-based number of a generated county (c001 is 1); 0 for the hand-written sites
	Kind      siteKind
	Challenge bool // cookie challenge on every path but robots.txt
	// StaticFiles: the site's pages are files served the way nginx serves
	// them, byte ranges honoured (see serveRange); otherwise every page is
	// built per request and a Range header is ignored, as dynamic pages
	// (and most CMS front ends) do.
	StaticFiles bool
	SID         string // gkmlpt only
	PageSize    int
	Depts       []*dept // gkmlpt: CMS departments; template sites: one dept with Path ""
	Disallow    []string
	// docPrefix is the document-number prefix used when a dept has none.
	idBase int
	nextID int

	byPath      map[string]*article
	attachments map[string]*attachment
	columns     []*column // every column (leaves and groups) in definition order
}

// dept is a gkmlpt department sub-site (dept_path) or, for template sites,
// the whole site.
type dept struct {
	Path      string // dept_path; empty for template sites
	Name      string // publisher name shown on pages
	DocPrefix string // e.g. 清发改 → 清发改〔2025〕3号
	Credit    string // unified social credit code used in index numbers
	Columns   []*column
	site      *site
}

// column is one classify node of a gkmlpt TREE, or one list column of a
// template site.
type column struct {
	ID       string // gkmlpt classify id; template sites: the path segment(s)
	Name     string
	Count    int // articles at Scale 1
	Cadence  time.Duration
	JumpURL  string
	Children []*column
	Category string // open_category shown on pages
	Kind     string // title flavour: notice, plan, stats, report, recruit, policy, news
	// TargetCode is the code the bundled config gives this column; empty when
	// the column exists on the site but is not configured.
	TargetCode string

	dept     *dept
	parent   *column
	articles []*article // newest first
	created  time.Time
	nextDue  time.Time // next cadence tick on the sim clock
}

func (c *column) isLeaf() bool { return len(c.Children) == 0 }

// hours is a shorthand for cadences.
func hours(n int) time.Duration { return time.Duration(n) * time.Hour }

// leaf builds a leaf column.
func leaf(id, name string, count int, cadenceHours int, category, kind, target string) *column {
	return &column{ID: id, Name: name, Count: count, Cadence: hours(cadenceHours), Category: category, Kind: kind, TargetCode: target}
}

// group builds a non-leaf classify node.
func group(id, name string, children ...*column) *column {
	return &column{ID: id, Name: name, Children: children}
}

// defineSites returns the world's sites in a fixed order. Column names carry
// the column-name variants real portals use (规划计划 / "规划计划 " / 规划与计划 / 发展规划).
func defineSites() []*site {
	return []*site{
		{
			Host: "www.qingyuan.gov.test", Code: "qingyuan", Name: "清远市人民政府门户网站", City: "清远市",
			Kind: kindGkmlpt, Challenge: true, SID: "755010", PageSize: 10, idBase: 1830000,
			Depts: []*dept{
				{Path: "qyfgw", Name: "清远市发展和改革局", DocPrefix: "清发改", Credit: "11441800MB2D1234X7", Columns: []*column{
					group("14001", "政策文件",
						leaf("14011", "规范性文件", 5, 240, "综合政务、通知", "policy", "qingyuan_qyfgw_14011"),
						leaf("14012", "其他文件", 3, 336, "综合政务、其他", "notice", "qingyuan_qyfgw_14012")),
					leaf("14002", "规划计划", 11, 96, "国民经济管理、国有资产监管", "plan", "qingyuan_qyfgw_14002"),
					leaf("14003", "价格管理", 3, 168, "国民经济管理、价格", "notice", "qingyuan_qyfgw_14003"),
				}},
				{Path: "qyjyj", Name: "清远市教育局", DocPrefix: "清教", Credit: "11441800007184571K", Columns: []*column{
					leaf("15001", "通知公告", 5, 72, "教育、通知", "notice", "qingyuan_qyjyj_15001"),
					leaf("15002", "招生考试", 4, 168, "教育、招生", "notice", "qingyuan_qyjyj_15002"),
					leaf("15003", "招聘公告", 3, 240, "教育、人事", "recruit", "qingyuan_qyjyj_15003"),
					{ID: "15004", Name: "教育督导", JumpURL: "http://www.qingyuan.gov.test/qyjyj/jydd/"},
				}},
				{Path: "xxgk", Name: "清远市人民政府", DocPrefix: "清府", Credit: "114418000071862246", Columns: []*column{
					leaf("90001", "市政府工作报告", 3, 2160, "综合政务、报告", "report", "qingyuan_xxgk_90001"),
					group("90002", "政府文件",
						leaf("90021", "清府文件", 5, 168, "综合政务、通知", "policy", "qingyuan_xxgk_90021"),
						leaf("90022", "清府办文件", 4, 168, "综合政务、通知", "policy", "qingyuan_xxgk_90022")),
					leaf("90003", "发展规划", 2, 720, "国民经济管理、规划", "plan", "qingyuan_xxgk_90003"),
					leaf("90004", "人事任免", 2, 720, "综合政务、人事", "recruit", ""),
				}},
				{Path: "tjgb", Name: "清远市统计局", DocPrefix: "清统", Credit: "11441800007186403T", Columns: []*column{
					leaf("91001", "统计公报", 3, 2160, "统计、公报", "stats", "qingyuan_tjgb_91001"),
					leaf("91002", "统计数据", 3, 720, "统计、数据", "stats", "qingyuan_tjgb_91002"),
					leaf("91003", "统计分析", 2, 720, "统计、分析", "stats", "qingyuan_tjgb_91003"),
				}},
			},
		},
		{
			Host: "www.qingcheng.gov.test", Code: "qingcheng", Name: "清远市清城区人民政府", City: "清城区",
			Kind: kindGkmlpt, SID: "763042", PageSize: 10, idBase: 2410000,
			Depts: []*dept{
				{Path: "qcfgw", Name: "清远市清城区发展和改革局", DocPrefix: "清城发改", Credit: "11441802MB2C40118P", Columns: []*column{
					leaf("2849", "规章文件", 6, 240, "综合政务、规章", "policy", "qingcheng_qcfgw_2849"),
					leaf("2850", "规划计划 ", 8, 120, "国民经济管理、规划", "plan", "qingcheng_qcfgw_2850"),
					leaf("2851", "通知公告", 5, 96, "综合政务、通知", "notice", "qingcheng_qcfgw_2851"),
					leaf("2852", "政策解读", 5, 168, "综合政务、解读", "notice", "qingcheng_qcfgw_2852"),
				}},
			},
		},
		{
			Host: "www.yingde.gov.test", Code: "yingde", Name: "英德市人民政府", City: "英德市",
			Kind: kindGkmlpt, SID: "768031", PageSize: 10, idBase: 3120000,
			Depts: []*dept{
				{Path: "ydfgw", Name: "英德市发展和改革局", DocPrefix: "英发改", Credit: "11441881MB2E07635R", Columns: []*column{
					leaf("3101", "规划与计划", 6, 168, "国民经济管理、规划", "plan", "yingde_ydfgw_3101"),
					leaf("3102", "价格信息", 4, 168, "国民经济管理、价格", "notice", "yingde_ydfgw_3102"),
					leaf("3103", "通知公告", 4, 96, "综合政务、通知", "notice", "yingde_ydfgw_3103"),
				}},
				{Path: "ydjyj", Name: "英德市教育局", DocPrefix: "英教", Credit: "11441881007248912M", Columns: []*column{
					leaf("3201", "招生考试", 5, 168, "教育、招生", "notice", "yingde_ydjyj_3201"),
					leaf("3202", "人事招聘", 4, 240, "教育、人事", "recruit", "yingde_ydjyj_3202"),
					leaf("3203", "规范性文件", 3, 336, "教育、通知", "policy", "yingde_ydjyj_3203"),
				}},
			},
		},
		{
			Host: "www.lianzhou.gov.test", Code: "lianzhou", Name: "连州市人民政府网", City: "连州市", Mark: "4418820001",
			Kind: kindLianzhou, StaticFiles: true, PageSize: 8, idBase: 510000,
			Depts: []*dept{{Name: "连州市人民政府办公室", DocPrefix: "连府办", Credit: "11441882007260415Y", Columns: []*column{
				leaf("tzgg", "通知公告", 10, 72, "综合政务", "notice", "lianzhou_tzgg"),
				leaf("zcwj", "政策文件", 9, 168, "综合政务", "policy", "lianzhou_zcwj"),
				leaf("ghjh", "规划计划", 8, 336, "国民经济管理", "plan", "lianzhou_ghjh"),
				leaf("rsxx", "人事信息", 4, 336, "人事", "recruit", "lianzhou_rsxx"),
			}}},
		},
		{
			Host: "www.gd.gov.test", Code: "gd_ref", Name: "广东省人民政府门户网站", City: "广东省",
			Kind: kindGD, StaticFiles: true, PageSize: 5, idBase: 4100000,
			Disallow: []string{"/zwgk/rsrm/"},
			Depts: []*dept{{Name: "广东省人民政府办公厅", DocPrefix: "粤府办", Credit: "11440000006939680U", Columns: []*column{
				leaf("zwgk/wjk", "文件库", 8, 96, "综合政务", "policy", "gd_ref_wjk"),
				leaf("zwgk/zcjd", "政策解读", 6, 120, "综合政务", "notice", "gd_ref_zcjd"),
				leaf("zwgk/rsrm", "人事任免", 4, 336, "人事", "recruit", "gd_ref_rsrm"),
			}}},
		},
		{
			Host: "www.gov.test", Code: "gov_ref", Name: "中华人民共和国中央人民政府",
			Kind: kindGov, PageSize: 4, idBase: 7010000,
			Depts: []*dept{{Name: "国务院办公厅", DocPrefix: "国办发", Credit: "11100000000013127D", Columns: []*column{
				leaf("zhengce/zuixin", "最新政策", 6, 72, "综合政务", "policy", "gov_ref_zuixin"),
				leaf("zhengce/jiedu", "政策解读", 5, 120, "综合政务", "notice", "gov_ref_jiedu"),
				leaf("zhengce/xxgk", "国务院文件", 4, 168, "综合政务", "policy", "gov_ref_xxgk"),
			}}},
		},
		{
			Host: "www.news.test", Code: "news", Name: "北江新闻网", City: "清远市",
			Kind: kindNews, StaticFiles: true, PageSize: 5, idBase: 880000,
			Depts: []*dept{{Name: "北江新闻网", Columns: []*column{
				leaf("news", "本地新闻", 10, 24, "", "news", "news_local"),
			}}},
		},
	}
}
