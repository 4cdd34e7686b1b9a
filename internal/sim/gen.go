package sim

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
	"unicode/utf8"
	"zhizhi/internal/config/zone"
)

// shanghai is the zone every page prints its dates in.
var shanghai = zone.Shanghai

// article is one document on one site. Its pages are rendered from these
// fields on every request, so an edit changes every page that shows it.
type article struct {
	ID          int
	Column      *column
	Title       string
	IndexNo     string
	DocNo       string
	Publisher   string
	Published   time.Time // minute precision
	Effective   time.Time // 成文日期, a day or more before publication
	TopicWords  string
	Category    string
	Blocks      []block
	Attachments []*attachment
	Images      []string // news only: image paths
	Modified    time.Time
	Version     int
	Abolished   bool
	Path        string // detail path on its site
}

// block is one piece of body: a paragraph, a heading or a table.
type block struct {
	Kind  string // p, h, table
	Text  string
	Rows  [][]string
	Align string // right-aligned signature lines
}

// attachment is a real file linked from an article.
type attachment struct {
	ID    int
	Name  string // file name shown as link text, with extension
	Ext   string // pdf | docx | png
	Path  string
	Title string
	Lines []string // the text the file carries
	data  []byte
	mod   time.Time
}

// Vocabulary. Plain word lists; the generator picks from them with the
// site's own PRNG, so output depends only on the seed.
var (
	topicsByKind = map[string][]string{
		"policy":  {"优化营商环境", "促进民营经济高质量发展", "加快发展新型储能产业", "推进数字政府改革建设", "加强城乡生活垃圾分类管理", "规范行政裁量权基准", "支持先进制造业发展", "推进高标准农田建设", "加强耕地保护", "促进就业创业"},
		"plan":    {"国民经济和社会发展", "重点建设项目", "现代物流业发展", "能源发展", "新型基础设施建设", "乡村振兴", "北部生态发展区建设", "粮食安全保障", "公共服务设施布局", "城乡融合发展"},
		"notice":  {"安全生产专项整治", "价格监测", "节假日值班安排", "防汛防旱防风", "消防安全检查", "政务服务事项调整", "义务教育学位供给", "学前教育普惠发展", "中小学校园安全", "政府信息公开工作"},
		"report":  {"政府工作", "法治政府建设", "政府信息公开工作", "财政预算执行"},
		"stats":   {"国民经济和社会发展", "农业生产", "规模以上工业", "居民收入和消费支出", "固定资产投资", "人口抽样调查"},
		"recruit": {"公开招聘教师", "公开招聘事业单位工作人员", "公开选调公务员", "公开招聘政府雇员", "引进高层次人才"},
		"news":    {"北江两岸", "连江口镇", "英西峰林", "飞来峡", "太和古洞", "连南千年瑶寨", "阳山县城", "佛冈汤塘"},
	}
	purposes = []string{
		"深入贯彻落实省委、省政府决策部署", "进一步提升治理体系和治理能力现代化水平", "推动全市经济社会高质量发展",
		"切实保障人民群众生命财产安全", "持续优化政务服务", "加快建设现代化产业体系", "巩固拓展脱贫攻坚成果",
	}
	laws = []string{
		"中华人民共和国政府信息公开条例", "广东省人民政府规章立法程序规定", "中华人民共和国价格法",
		"中华人民共和国统计法", "中华人民共和国教育法", "优化营商环境条例", "中华人民共和国安全生产法",
	}
	headings = []string{
		"总体要求", "主要目标", "重点任务", "保障措施", "工作步骤", "职责分工", "组织实施", "监督检查", "其他事项",
	}
	sentences = []string{
		"各地各部门要高度重视%s工作，切实加强组织领导，明确责任分工，确保各项任务落到实处。",
		"坚持问题导向和目标导向，聚焦%s中的难点堵点，制定切实可行的工作措施。",
		"到2027年，%s工作体系基本健全，主要指标达到全省平均水平以上。",
		"建立健全%s工作协调机制，定期研究解决工作推进中的重大问题。",
		"加大财政资金统筹力度，对%s相关项目给予适当倾斜和支持。",
		"强化督促检查，将%s工作纳入年度绩效考核，对工作不力的单位予以通报。",
		"充分利用报刊、广播电视、政府网站等渠道，广泛宣传%s的政策措施和典型经验。",
		"各县（市、区）要结合本地实际，制定%s具体实施方案，并于每季度末报送工作进展情况。",
		"鼓励社会资本参与%s，形成政府引导、市场运作、社会参与的多元投入格局。",
		"严格落实安全生产责任制，做好%s过程中的风险排查和隐患整治工作。",
		"加强数据共享和信息化支撑，推动%s相关业务“一网通办”。",
		"对照时间节点，倒排工期，挂图作战，确保%s各项目标任务如期完成。",
	}
	statsSentences = []string{
		"初步核算，全年全市地区生产总值%d亿元，比上年增长%d.%d%%。",
		"全年规模以上工业增加值比上年增长%d.%d%%，其中先进制造业增加值增长%d.%d%%。",
		"全年全体居民人均可支配收入%d元，比上年增长%d.%d%%。",
		"年末全市常住人口%d万人，城镇化率%d.%d%%。",
	}
	newsSentences = []string{
		"清晨的%s薄雾未散，沿岸的村民已经开始一天的劳作。",
		"记者在%s走访时看到，新修的道路两旁种满了绿化树，往来车辆络绎不绝。",
		"“这几年变化太大了。”当地一位老人指着不远处的新楼告诉记者，%s一带过去是一片荒地。",
		"据介绍，%s项目总投资约数亿元，建成后将带动周边数千名群众就业。",
		"夜幕降临，%s的灯光次第亮起，前来游玩的市民和游客在江边散步、拍照。",
		"当地干部表示，下一步将继续围绕%s做好产业、文旅和生态文章。",
		"在%s的一家合作社里，工人们正忙着分拣、包装，一箱箱农产品将被发往珠三角各地。",
	}
	topicWordPool = []string{"发展规划", "通知", "公告", "方案", "价格", "教育", "招生", "统计", "公报", "安全生产", "营商环境", "乡村振兴", "人事", "招聘", "财政", "城乡建设"}
	cnDigits      = []string{"一", "二", "三", "四", "五", "六", "七", "八", "九", "十"}
)

// pick returns a random element of list.
func pick[T any](r *rand.Rand, list []T) T { return list[r.IntN(len(list))] }

// newArticle generates one article of column c published at t.
func (w *World) newArticle(r *rand.Rand, c *column, id int, t time.Time) *article {
	d := c.dept
	s := d.site
	topics := topicsByKind[c.Kind]
	topic := pick(r, topics)
	year := t.In(shanghai).Year()
	a := &article{
		ID:        id,
		Column:    c,
		Publisher: d.Name,
		Published: t,
		Effective: dayOf(t.Add(-time.Duration(r.IntN(10)+1) * 24 * time.Hour)),
		Category:  c.Category,
		Modified:  t,
		Version:   1,
	}
	city := s.City
	gov := city + "人民政府"
	if s.Code == "gov_ref" {
		gov = "国务院"
	}
	a.Title = makeTitle(r, c.Kind, city, gov, d.Name, topic, year)
	if c.Kind != "news" {
		if r.IntN(5) > 0 || c.Kind == "policy" {
			a.DocNo = fmt.Sprintf("%s〔%d〕%d号", d.DocPrefix, year, r.IntN(120)+1)
		}
		a.IndexNo = fmt.Sprintf("%s/%d-%05d", d.Credit, year, id%100000)
		a.TopicWords = topicWords(r, c.Kind)
	} else {
		a.Publisher = "北江新闻网记者"
	}
	a.Blocks = makeBody(r, c.Kind, topic, a)
	if c.Kind == "news" {
		n := 2 + r.IntN(3)
		for i := range n {
			a.Images = append(a.Images, fmt.Sprintf("/images/%d_%d.png", id, i+1))
		}
		// Some reports link a document (the notice they report on). Chosen
		// by id, not drawn, so the rest of the site stays as it was.
		if id%3 == 0 {
			a.Attachments = append(a.Attachments, w.newAttachment(s, a, "pdf"))
		}
	} else if r.IntN(100) < 15 {
		ext := "pdf"
		if r.IntN(2) == 0 {
			ext = "docx"
		}
		a.Attachments = append(a.Attachments, w.newAttachment(s, a, ext))
	}
	if c.Kind == "policy" && r.IntN(12) == 0 {
		a.Abolished = true
	}
	return a
}

func makeTitle(r *rand.Rand, kind, city, gov, dept, topic string, year int) string {
	switch kind {
	case "policy":
		return pick(r, []format{
			"%[3]s关于印发《%[1]s%[2]s工作方案》的通知",
			"关于印发%[1]s%[2]s实施意见的通知",
			"%[1]s%[2]s若干措施",
			"关于进一步%[2]s的通知",
		}).fmt(city, topic, gov)
	case "plan":
		return pick(r, []format{
			"%[1]s%[2]s“十五五”规划",
			"%[1]s%[2]s实施方案（%[3]d—%[4]d年）",
			"关于印发《%[1]s%[2]s三年行动计划》的通知",
			"%[3]d年%[1]s%[2]s工作要点",
		}).fmt(city, topic, year, year+2)
	case "report":
		return fmt.Sprintf("%d年%s%s报告", year-1, city, topic)
	case "stats":
		return pick(r, []format{
			"%[1]s%[3]d年%[2]s统计公报",
			"%[3]d年前三季度%[1]s%[2]s情况",
			"%[1]s%[3]d年%[2]s主要数据解读",
		}).fmt(city, topic, year-1)
	case "recruit":
		return fmt.Sprintf("%s%d年%s公告", dept, year, topic)
	case "news":
		return pick(r, []format{
			"走进%[1]s：一条江与一座城的变迁",
			"%[1]s：乡村振兴路上的新风景",
			"记者蹲点%[1]s，看见生活的新模样",
			"%[1]s的春天：产业兴旺带来好日子",
		}).fmt(topic)
	default:
		return pick(r, []format{
			"%[2]s关于做好%[3]s工作的通知",
			"关于%[3]s有关事项的公告",
			"%[2]s关于开展%[3]s的通知",
			"关于公开征求《%[1]s%[3]s管理办法（征求意见稿）》意见的公告",
		}).fmt(city, dept, topic)
	}
}

// format is a string used as a format; the method keeps titles readable.
type format string

func (f format) fmt(args ...any) string { return fmt.Sprintf(string(f), args...) }

func topicWords(r *rand.Rand, kind string) string {
	n := 1 + r.IntN(3)
	seen := map[string]bool{}
	var out []string
	for len(out) < n {
		w := pick(r, topicWordPool)
		if kind == "stats" && len(out) == 0 {
			w = "统计"
		}
		if !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// makeBody builds 300–5,000 characters of body (5,000–20,000 for news).
func makeBody(r *rand.Rand, kind, topic string, a *article) []block {
	var bs []block
	p := func(s string) { bs = append(bs, block{Kind: "p", Text: s}) }
	if kind == "news" {
		target := 5000 + r.IntN(12000)
		for utf8.RuneCountInString(blocksText(bs)) < target {
			var sb strings.Builder
			for range 3 + r.IntN(4) {
				sb.WriteString(fmt.Sprintf(pick(r, newsSentences), topic))
			}
			p(sb.String())
		}
		return bs
	}
	if kind == "stats" {
		p(fmt.Sprintf("%d年，面对复杂严峻的外部环境，全市上下坚持稳中求进工作总基调，经济运行总体平稳、稳中有进。", a.Published.In(shanghai).Year()-1))
		for i := 0; i < 3+r.IntN(6) || utf8.RuneCountInString(blocksText(bs)) < 300; i++ {
			p(statsLine(r, pick(r, statsSentences)))
		}
		bs = append(bs, statsTable(r))
		return append(bs, signature(a)...)
	}
	p("各县（市、区）人民政府，市府直属各单位：")
	p(fmt.Sprintf("为%s，根据《%s》等有关规定，结合实际，现就%s有关工作通知如下。", pick(r, purposes), pick(r, laws), topic))
	sections := 1 + r.IntN(7)
	offset := r.IntN(3)
	for i := range sections {
		bs = append(bs, block{Kind: "h", Text: cnDigits[i] + "、" + headings[(i+offset)%len(headings)]})
		for range 1 + r.IntN(3) {
			var sb strings.Builder
			for range 2 + r.IntN(4) {
				sb.WriteString(fmt.Sprintf(pick(r, sentences), topic))
			}
			p(sb.String())
		}
	}
	for utf8.RuneCountInString(blocksText(bs)) < 320 {
		p(fmt.Sprintf(pick(r, sentences), topic) + fmt.Sprintf(pick(r, sentences), topic))
	}
	if r.IntN(4) == 0 {
		bs = append(bs, taskTable(r, topic))
	}
	if kind == "recruit" {
		p("报名时间：自本公告发布之日起10个工作日内。联系电话：0763-3362000。")
	}
	return append(bs, signature(a)...)
}

func statsLine(r *rand.Rand, s string) string {
	switch strings.Count(s, "%d") {
	case 3:
		return fmt.Sprintf(s, 1000+r.IntN(2000), 1+r.IntN(8), r.IntN(10))
	case 4:
		return fmt.Sprintf(s, 1+r.IntN(8), r.IntN(10), 1+r.IntN(9), r.IntN(10))
	default:
		return fmt.Sprintf(s, 20000+r.IntN(30000), 1+r.IntN(8), r.IntN(10))
	}
}

func statsTable(r *rand.Rand) block {
	rows := [][]string{{"指标", "单位", "绝对数", "比上年增长（%）"}}
	for _, name := range []string{"地区生产总值", "第一产业增加值", "第二产业增加值", "第三产业增加值"} {
		rows = append(rows, []string{name, "亿元", fmt.Sprintf("%d.%d", 100+r.IntN(2000), r.IntN(10)), fmt.Sprintf("%d.%d", r.IntN(9), r.IntN(10))})
	}
	return block{Kind: "table", Rows: rows}
}

func taskTable(r *rand.Rand, topic string) block {
	rows := [][]string{{"序号", "工作任务", "责任单位", "完成时限"}}
	units := []string{"市发展改革局", "市教育局", "市财政局", "市自然资源局", "市住房城乡建设局", "各县（市、区）人民政府"}
	for i := range 3 + r.IntN(4) {
		rows = append(rows, []string{fmt.Sprint(i + 1), fmt.Sprintf("%s第%s阶段任务", topic, cnDigits[i]), pick(r, units), fmt.Sprintf("%d年%d月底前", 2026+r.IntN(2), 1+r.IntN(12))})
	}
	return block{Kind: "table", Rows: rows}
}

func signature(a *article) []block {
	return []block{
		{Kind: "p", Text: a.Publisher, Align: "right"},
		{Kind: "p", Text: cnDate(a.Effective), Align: "right"},
	}
}

// blocksText is the body text of blocks as the truth reports it: one line per
// paragraph or heading, one line per table row with cells separated by a space.
func blocksText(bs []block) string {
	var lines []string
	for _, b := range bs {
		switch b.Kind {
		case "table":
			for _, row := range b.Rows {
				lines = append(lines, strings.Join(row, " "))
			}
		default:
			lines = append(lines, b.Text)
		}
	}
	return strings.Join(lines, "\n")
}

// dayOf is midnight in Shanghai of the day t falls on.
func dayOf(t time.Time) time.Time {
	y, m, d := t.In(shanghai).Date()
	return time.Date(y, m, d, 0, 0, 0, 0, shanghai)
}

// Date formats the real portals print.
func isoDate(t time.Time) string { return t.In(shanghai).Format("2006-01-02") }
func isoMinute(t time.Time) string {
	return t.In(shanghai).Format("2006-01-02 15:04")
}
func slashDate(t time.Time) string { return t.In(shanghai).Format("2006/1/2") }
func cnDate(t time.Time) string {
	t = t.In(shanghai)
	return fmt.Sprintf("%d年%d月%d日", t.Year(), int(t.Month()), t.Day())
}
