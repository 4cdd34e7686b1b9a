package search

import (
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// A deterministic generator of government-looking documents, for the
// exactness tests and the benchmark. Titles, bodies and 文号 are built from
// the vocabulary real notices use, with digits, dates, Latin words and
// full-width punctuation mixed in the way real pages mix them.

type genDept struct{ code, name, prefix string }

var genDepts = []genDept{
	{"gz_fgw", "广州市发展和改革委员会", "穗发改"},
	{"gz_jyj", "广州市教育局", "穗教"},
	{"gz_czj", "广州市财政局", "穗财"},
	{"gz_tjj", "广州市统计局", "穗统"},
	{"gz_zfb", "广州市人民政府办公厅", "穗府办"},
	{"qy_fgj", "清远市发展和改革局", "清发改"},
	{"qy_jyj", "清远市教育局", "清教"},
	{"qy_zrzy", "清远市自然资源局", "清自然资"},
	{"gd_zfb", "广东省人民政府办公厅", "粤府办"},
	{"gd_sthj", "广东省生态环境厅", "粤环"},
	{"gw_bgt", "国务院办公厅", "国办发"},
	{"gw_fgw", "国家发展改革委", "发改办"},
}

var genChannels = []string{"通知公告", "政策文件", "规划计划", "政策解读", "人事信息", "统计数据", "政务动态"}

var genTopics = []string{
	"优化营商环境", "数字政府建设", "乡村振兴", "城乡生活垃圾分类", "高标准农田建设", "耕地保护",
	"促进就业创业", "安全生产专项整治", "防汛防旱防风", "消防安全检查", "义务教育学位供给",
	"学前教育普惠发展", "政府信息公开", "财政预算执行", "新型储能产业", "现代物流业发展",
	"公共服务设施布局", "粮食安全保障", "城市更新", "老旧小区改造", "医疗保障", "养老服务体系",
	"生态环境保护", "大气污染防治", "水污染防治", "科技创新", "知识产权保护", "人才引进",
	"中小企业发展", "外贸稳增长", "行政审批制度改革", "12345政务服务便民热线", "一网通办", "APP适老化改造",
}

var genTitleFormats = []string{
	"%[1]s关于印发《%[2]s工作方案》的通知",
	"关于进一步做好%[2]s工作的通知",
	"%[1]s关于开展%[2]s的公告",
	"%[3]d年%[2]s工作要点",
	"关于公开征求《%[2]s管理办法（征求意见稿）》意见的公告",
	"《%[2]s三年行动计划（%[3]d—%[4]d年）》政策解读",
	"%[1]s%[3]d年%[2]s情况的报告",
	"关于%[2]s有关事项的通知",
}

var genSentences = []string{
	"各地各部门要高度重视%s工作，切实加强组织领导，明确责任分工，确保各项任务落到实处。",
	"坚持问题导向和目标导向，聚焦%s中的难点堵点，制定切实可行的工作措施。",
	"到%d年，%s工作体系基本健全，主要指标达到全省平均水平以上。",
	"建立健全%s工作协调机制，定期研究解决工作推进中的重大问题。",
	"加大财政资金统筹力度，对%s相关项目给予适当倾斜和支持，全年安排资金%d万元。",
	"强化督促检查，将%s工作纳入年度绩效考核，对工作不力的单位予以通报。",
	"充分利用报刊、广播电视、政府网站和政务新媒体等渠道，广泛宣传%s的政策措施。",
	"各县（市、区）要结合本地实际，制定%s具体实施方案，并于%d月底前报送工作进展情况。",
	"鼓励社会资本参与%s，形成政府引导、市场运作、社会参与的多元投入格局。",
	"严格落实安全生产责任制，做好%s过程中的风险排查和隐患整治工作。",
	"加强数据共享和信息化支撑，推动%s相关业务“一网通办”“跨省通办”。",
	"对照时间节点，倒排工期，挂图作战，确保%s各项目标任务如期完成。",
	"全年%s相关指标比上年增长%d.%d%%，完成年度计划的%d%%。",
	"联系人：张先生，联系电话：020-%d，电子邮箱：zwgk%d@gz.gov.test。",
	"附件：%s工作任务分解表（PDF版）。",
	"申请人可通过12345热线或“粤省事”APP提交%s相关诉求。",
}

// genDoc makes document i of a corpus whose bodies are roughly bodyRunes
// long (±50%).
func genDoc(r *rand.Rand, i, bodyRunes int) *Doc {
	d := genDepts[r.IntN(len(genDepts))]
	topic := genTopics[r.IntN(len(genTopics))]
	year := 2019 + r.IntN(8)
	city := d.name
	title := fmt.Sprintf(genTitleFormats[r.IntN(len(genTitleFormats))], city, topic, year, year+2)
	doc := &Doc{
		ID: fmt.Sprintf("doc-%06d", i), Revision: 1 + r.IntN(3), Title: title,
		DeptCode: d.code, DeptName: d.name, Channel: genChannels[r.IntN(len(genChannels))],
		Publisher: d.name, URL: fmt.Sprintf("http://www.example.gov.test/%s/%d.html", d.code, i),
	}
	if r.IntN(10) < 8 {
		doc.DocNo = fmt.Sprintf("%s〔%d〕%d号", d.prefix, year, 1+r.IntN(300))
	}
	if r.IntN(30) > 0 {
		doc.Date = fmt.Sprintf("%d-%02d-%02d", year, 1+r.IntN(12), 1+r.IntN(28))
	}
	target := bodyRunes/2 + r.IntN(bodyRunes+1)
	var b strings.Builder
	b.WriteString("各县（市、区）人民政府，市政府各部门、各直属机构：\n")
	n := 0
	for n < target {
		for range 2 + r.IntN(4) {
			s := genSentences[r.IntN(len(genSentences))]
			other := topic
			if r.IntN(4) == 0 {
				other = genTopics[r.IntN(len(genTopics))]
			}
			var line string
			switch strings.Count(s, "%d") {
			case 0:
				line = fmt.Sprintf(s, other)
			case 1:
				if strings.Index(s, "%d") < strings.Index(s, "%s") {
					line = fmt.Sprintf(s, 2020+r.IntN(10), other)
				} else {
					line = fmt.Sprintf(s, other, 1+r.IntN(12))
				}
			case 2:
				line = fmt.Sprintf(s, 80000000+r.IntN(9999999), r.IntN(100))
			default:
				line = fmt.Sprintf(s, other, 1+r.IntN(30), r.IntN(10), 50+r.IntN(60))
			}
			b.WriteString(line)
			n += utf8.RuneCountInString(line)
		}
		b.WriteByte('\n')
	}
	b.WriteString(d.name + "\n")
	if doc.Date != "" {
		b.WriteString(fmt.Sprintf("%d年%d月%d日", year, 1+r.IntN(12), 1+r.IntN(28)))
	}
	doc.Body = b.String()
	return doc
}

// genCorpus returns n generated documents.
func genCorpus(seed uint64, n, bodyRunes int) []*Doc {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	docs := make([]*Doc, n)
	for i := range docs {
		docs[i] = genDoc(r, i, bodyRunes)
	}
	return docs
}

// slice feeds docs to Build.
func slice(docs []*Doc) func() (*Doc, error) {
	i := 0
	return func() (*Doc, error) {
		if i == len(docs) {
			return nil, io.EOF
		}
		i++
		return docs[i-1], nil
	}
}

// buildIndex builds docs into a file in t.TempDir() and opens it.
func buildIndex(t testing.TB, docs []*Doc) *Index {
	t.Helper()
	path := filepath.Join(t.TempDir(), "search.sqlite")
	if _, err := Build(context.Background(), path, slice(docs)); err != nil {
		t.Fatal(err)
	}
	x, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { x.Close() })
	return x
}
