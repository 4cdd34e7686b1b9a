package sim

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// MaxCounties is the largest number of generated county sites a world may
// have (Options.Counties).
const MaxCounties = 200

// CountyDomain is the domain every generated county host ends in:
// c001.county.gov.test, c002.county.gov.test, …
const CountyDomain = "county.gov.test"

// countyDept is one department every generated county has, in the order
// their department ids are given. abbr is its gkmlpt dept_path, short the
// part of its document-number prefix after the county's first character.
type countyDept struct {
	abbr, name, short string
}

// countyOffice is the county government's office: the publisher of a
// template county's pages and the department its general columns belong to.
var countyOffice = countyDept{"zfb", "人民政府办公室", "府办"}

var countyDepts = []countyDept{
	{"fgj", "发展和改革局", "发改"},
	{"jyj", "教育局", "教"},
	{"czj", "财政局", "财"},
	{"tjj", "统计局", "统"},
	{"zjj", "住房和城乡建设局", "建"},
	{"zrzyj", "自然资源局", "自然资源"},
	{"wjj", "卫生健康局", "卫健"},
	{"rsj", "人力资源和社会保障局", "人社"},
	{"nyj", "农业农村局", "农"},
	{"jtj", "交通运输局", "交"},
	{"scjgj", "市场监督管理局", "市监"},
	{"yjj", "应急管理局", "应急"},
}

// countyColumn is a kind of column a county publishes. names are the
// spellings real portals use for it (a trailing space included); seg is
// its path segment on a template site; topic is the config category; dept
// is the department a template site's column of this kind is bound to.
type countyColumn struct {
	seg      string
	names    []string
	kind     string
	category string // open_category printed on the pages
	topic    string
	hours    int // cadence
	dept     string
}

var countyColumns = []countyColumn{
	{"tzgg", []string{"通知公告", "通知", "公告公示"}, "notice", "综合政务、通知", "通知公告", 96, "zfb"},
	{"zcwj", []string{"政策文件", "政府文件"}, "policy", "综合政务、通知", "政策文件", 168, "zfb"},
	{"ghjh", []string{"规划计划", "规划计划 ", "规划与计划", "发展规划"}, "plan", "国民经济管理、规划", "规划计划", 240, "fgj"},
	{"zcjd", []string{"政策解读", "解读回应"}, "notice", "综合政务、解读", "政策解读", 168, "zfb"},
	{"tjxx", []string{"统计数据", "统计信息", "统计公报"}, "stats", "统计、数据", "统计信息", 720, "tjj"},
	{"rszp", []string{"人事招聘", "招聘信息", "招考信息"}, "recruit", "综合政务、人事", "招聘信息", 336, "rsj"},
	{"jgxx", []string{"价格信息", "价格管理"}, "notice", "国民经济管理、价格", "价格管理", 168, "fgj"},
	{"zsks", []string{"招生考试", "招生信息"}, "notice", "教育、招生", "招生考试", 240, "jyj"},
	{"gzbg", []string{"政府工作报告", "工作报告"}, "report", "综合政务、报告", "工作报告", 2160, "zfb"},
}

// countyRSRM is the appointments column of the provincial-style template
// counties: listed and configured, but its robots.txt forbids it.
var countyRSRM = countyColumn{"rsrm", []string{"人事任免"}, "recruit", "综合政务、人事", "人事任免", 720, "rsj"}

// countyGroup are the children of the group node some gkmlpt counties
// have (文件资料); countyUnconfigured is a column no config names.
var (
	countyGroup = []countyColumn{
		{"", []string{"规范性文件"}, "policy", "综合政务、规章", "规章文件", 336, ""},
		{"", []string{"其他文件"}, "notice", "综合政务、其他", "政策文件", 336, ""},
	}
	countyUnconfigured = countyColumn{"", []string{"机构职能"}, "notice", "综合政务、机构", "", 2160, ""}
)

// countyKind finds the kind of a county column by its name.
func countyKind(name string) countyColumn {
	all := append(append(slices.Clone(countyColumns), countyRSRM, countyUnconfigured), countyGroup...)
	for _, cc := range all {
		if slices.Contains(cc.names, name) {
			return cc
		}
	}
	panic("sim: no county column is named " + name)
}

// newLeaf makes a leaf column of kind cc with the given id, name and count.
func (cc countyColumn) newLeaf(id, name string, count int, target string) *column {
	return leaf(id, name, count, cc.hours, cc.category, cc.kind, target)
}

// County names are two characters and 县, drawn without repetition from
// these: 20 × 12 = 240 names, more than MaxCounties.
var (
	countyFirst  = []string{"青", "云", "石", "松", "桂", "梅", "兰", "竹", "柳", "枫", "鹤", "凤", "龙", "泉", "溪", "岭", "川", "林", "莲", "杏"}
	countySecond = []string{"山", "水", "平", "安", "宁", "阳", "江", "源", "丰", "和", "昌", "乐"}
)

// countyCode, countyHost and countyDeptID name county i (1-based).
func countyCode(i int) string { return fmt.Sprintf("c%03d", i) }
func countyHost(i int) string { return countyCode(i) + "." + CountyDomain }

// countyDeptID is the department id of county i's government (k = 0), its
// office (k = 1) and its departments (k = 2 + position in countyDepts).
// The ids start at 100000, clear of the bundled departments.
func countyDeptID(i, k int) int64 { return int64(100000 + i*100 + k) }

// countyDeptIndex is k of countyDeptID for a department abbreviation.
func countyDeptIndex(abbr string) int {
	if abbr == countyOffice.abbr {
		return 1
	}
	for j, d := range countyDepts {
		if d.abbr == abbr {
			return 2 + j
		}
	}
	panic("sim: unknown county department " + abbr)
}

// countyNames returns n distinct county names in an order the seed picks.
func countyNames(seed int64, n int) []string {
	var all []string
	for _, a := range countyFirst {
		for _, b := range countySecond {
			all = append(all, a+b+"县")
		}
	}
	r := siteRand(seed, "county-names")
	r.Shuffle(len(all), func(i, j int) { all[i], all[j] = all[j], all[i] })
	return all[:n]
}

// defineCounties returns n generated county sites. Odd ones run gkmlpt
// like the Qingyuan counties; even ones are template sites, alternately of
// the TRS kind (GB18030, index_1.html) and the provincial kind (下一页
// links, dl/dt/dd, a column robots.txt forbids). The layout of each comes
// from the seed and the county's code, so a county is the same whatever n.
func defineCounties(seed int64, n int) []*site {
	names := countyNames(seed, n)
	sites := make([]*site, 0, n)
	for i := 1; i <= n; i++ {
		r := siteRand(seed, "county-layout:"+countyCode(i))
		var s *site
		switch {
		case i%2 == 1:
			s = gkmlptCounty(r, i, names[i-1])
		case i%4 == 2:
			s = templateCounty(r, i, names[i-1], kindLianzhou)
		default:
			s = templateCounty(r, i, names[i-1], kindGD)
		}
		sites = append(sites, s)
	}
	return sites
}

// countyCredit is a unified social credit code (18 characters) for one
// department of a county.
func countyCredit(r *rand.Rand, i int) string {
	const alnum = "0123456789ABCDEFGHJKLMNPQRTUWXY"
	var b strings.Builder
	fmt.Fprintf(&b, "1144%04d", 1900+i)
	for range 10 {
		b.WriteByte(alnum[r.IntN(len(alnum))])
	}
	return b.String()
}

// countyArticles is a column's article count at Scale 1: a few, so that
// a polite crawl of one county takes about a minute; big columns pass a
// list page.
func countyArticles(r *rand.Rand, big bool, pageSize int) int {
	if big {
		return pageSize + 1 + r.IntN(2)
	}
	return 1 + r.IntN(3)
}

func gkmlptCounty(r *rand.Rand, i int, name string) *site {
	s := &site{
		Host: countyHost(i), Code: countyCode(i), Name: name + "人民政府", City: name, county: i,
		Kind: kindGkmlpt, SID: fmt.Sprint(770000 + r.IntN(29000)), PageSize: 10,
		idBase: 5000000 + i*10000,
	}
	first := string([]rune(name)[:1])
	nextID := 1000 + 10*r.IntN(800)
	id := func() string { nextID++; return fmt.Sprint(nextID) }
	// The awkward parts of the Qingyuan TREEs, each in some counties: a
	// group node whose API lists its children's posts, a node that only
	// jumps elsewhere, a column nobody configured, a list past one page.
	withGroup, withJump, withUnconfigured := r.IntN(2) == 0, r.IntN(3) == 0, r.IntN(3) == 0
	big := r.IntN(2) == 0
	picked := r.Perm(len(countyDepts))[:2+r.IntN(3)/2]
	for di, pi := range picked {
		cd := countyDepts[pi]
		d := &dept{
			Path: cd.abbr, Name: name + cd.name, DocPrefix: first + cd.short, Credit: countyCredit(r, i),
		}
		code := func(col string) string { return s.Code + "_" + d.Path + "_" + col }
		for _, ci := range r.Perm(len(countyColumns))[:2+r.IntN(2)] {
			cc := countyColumns[ci]
			col := cc.newLeaf(id(), pick(r, cc.names), countyArticles(r, big, s.PageSize), "")
			col.TargetCode = code(col.ID)
			big = false
			d.Columns = append(d.Columns, col)
		}
		if di == 0 && withGroup {
			g := group(id(), "文件资料")
			for _, cc := range countyGroup {
				ch := cc.newLeaf(id(), cc.names[0], countyArticles(r, false, 0), "")
				ch.TargetCode = code(ch.ID)
				g.Children = append(g.Children, ch)
			}
			d.Columns = append(d.Columns, g)
		}
		if di == 1 && withJump {
			d.Columns = append(d.Columns, &column{ID: id(), Name: "专题专栏", JumpURL: "http://" + s.Host + "/" + d.Path + "/ztzl/"})
		}
		if di == len(picked)-1 && withUnconfigured {
			cc := countyUnconfigured
			d.Columns = append(d.Columns, cc.newLeaf(id(), cc.names[0], countyArticles(r, false, 0), ""))
		}
		s.Depts = append(s.Depts, d)
	}
	return s
}

func templateCounty(r *rand.Rand, i int, name string, kind siteKind) *site {
	s := &site{
		Host: countyHost(i), Code: countyCode(i), Name: name + "人民政府网", City: name, county: i,
		Kind: kind, PageSize: 8, idBase: 5000000 + i*10000,
		Mark: fmt.Sprintf("44%04d0001", 1900+i),
	}
	prefix := ""
	if kind == kindGD {
		s.PageSize, prefix = 5, "zwgk/"
	}
	first := string([]rune(name)[:1])
	d := &dept{Name: name + countyOffice.name, DocPrefix: first + countyOffice.short, Credit: countyCredit(r, i)}
	kinds := make([]countyColumn, 0, 5)
	for _, ci := range r.Perm(len(countyColumns))[:3+r.IntN(2)] {
		kinds = append(kinds, countyColumns[ci])
	}
	if kind == kindGD {
		kinds = append(kinds, countyRSRM)
		s.Disallow = []string{"/" + prefix + countyRSRM.seg + "/"}
	}
	for j, cc := range kinds {
		d.Columns = append(d.Columns, cc.newLeaf(prefix+cc.seg, pick(r, cc.names), countyArticles(r, j == 0, s.PageSize), s.Code+"_"+cc.seg))
	}
	s.Depts = []*dept{d}
	return s
}

// CountyHosts lists the hosts of the world's generated counties, in order.
func (w *World) CountyHosts() []string { return hostsOf(w.counties) }
