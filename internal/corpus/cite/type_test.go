package cite

import "testing"

// TestType classifies realistic titles as a person who knows Chinese
// government document genres would; each want is written by hand.
func TestType(t *testing.T) {
	cases := []struct {
		name     string
		title    string
		category string
		docNo    string
		want     string
	}{
		// Category decides first.
		{"normative document column", "关于做好2024年春季学期开学工作的通知", "规范性文件", "教基厅函〔2024〕3号", TypeRegulation},
		{"law column", "中华人民共和国数据安全法", "法律", "中华人民共和国主席令第八十四号", TypeLegislation},
		{"regulations column", "广州市城市更新条例", "地方性法规", "", TypeLegislation},
		{"rules column", "上海市生活垃圾管理实施办法", "政府规章", "", TypeLegislation},
		{"plans column", "关于印发《北京市“十四五”时期智慧城市发展行动纲要》的通知", "规划计划", "京政发〔2021〕17号", TypeReport},
		{"work report column", "2024年政府工作报告", "工作报告", "", TypeReport},
		{"interpretation column beats the genre in the title", "《政务数据共享管理办法》政策解读", "政策解读", "", TypeWebpage},
		{"news column", "国务院常务会议研究部署数字政府建设", "要闻动态", "", TypeWebpage},
		{"topic category names no genre", "关于做好人口监测工作的通知", "人口与计划生育", "", TypeRegulation},
		{"mixed portal column lets the title decide", "广东省数字经济促进条例", "政策法规", "", TypeLegislation},
		// 文号 of an order.
		{"State Council decree", "国务院关于修改和废止部分行政法规的决定", "", "中华人民共和国国务院令第752号", TypeLegislation},
		{"ministry rule by order", "道路运输车辆动态监督管理办法", "", "交通运输部令2024年第3号", TypeLegislation},
		{"municipal government rule", "深圳市公共数据管理办法", "", "深圳市人民政府令第349号", TypeLegislation},
		// Titles.
		{"law with revision note", "中华人民共和国个人信息保护法（2021年）", "", "", TypeLegislation},
		{"civil code", "中华人民共和国民法典", "", "", TypeLegislation},
		{"implementing regulation", "中华人民共和国土地管理法实施条例", "", "", TypeLegislation},
		{"law implementing rules", "中华人民共和国专利法实施细则（2023年修订）", "", "", TypeLegislation},
		{"judicial interpretation", "最高人民法院关于适用《中华人民共和国民法典》合同编通则若干问题的解释", "", "", TypeLegislation},
		{"NPC standing committee decision", "全国人民代表大会常务委员会关于加强经济工作监督的决定", "", "", TypeLegislation},
		{"amending decision takes the law", "关于修改《中华人民共和国行政复议法》的决定", "", "", TypeLegislation},
		{"office notice", "国务院办公厅关于加强政务数据共享的通知", "", "国办发〔2024〕12号", TypeRegulation},
		{"guiding opinions", "国务院关于加快推进政务服务标准化规范化便利化的指导意见", "", "国发〔2022〕5号", TypeRegulation},
		{"notice issuing a work plan", "关于印发《政府网站集约化试点工作方案》的通知", "", "", TypeReport},
		{"notice issuing a plan", "国务院关于印发“十四五”数字经济发展规划的通知", "", "国发〔2021〕29号", TypeReport},
		{"notice issuing measures (办法)", "市政府办公厅关于印发《宁波市政府投资项目管理办法》的通知", "", "甬政办发〔2023〕40号", TypeRegulation},
		{"forwarding opinions", "国务院办公厅转发国家发展改革委关于促进民间投资若干措施的意见的通知", "", "", TypeRegulation},
		{"notice publishing a list", "关于公布第一批数字乡村试点地区名单的通知", "", "", TypeRegulation},
		{"trial measures", "广东省政务数据资源共享管理办法（试行）", "", "", TypeRegulation},
		{"draft for comment", "北京市公共数据条例（征求意见稿）", "", "", TypeLegislation},
		{"announcement", "关于2024年部分节假日安排的公告", "", "", TypeRegulation},
		{"reply", "国务院关于同意设立中国（新疆）自由贸易试验区的批复", "", "国函〔2023〕94号", TypeRegulation},
		{"implementation plan", "浙江省数字政府建设实施方案", "", "", TypeReport},
		{"government work report with a dash subtitle", "政府工作报告——2024年3月5日在第十四届全国人民代表大会第二次会议上", "", "", TypeReport},
		{"report on plan execution", "关于2023年国民经济和社会发展计划执行情况与2024年国民经济和社会发展计划草案的报告", "", "", TypeReport},
		{"statistical communique", "2023年国民经济和社会发展统计公报", "", "", TypeReport},
		{"work summary", "市数据局2023年工作总结和2024年工作计划", "", "", TypeReport},
		{"work points", "2024年政务公开工作要点", "", "", TypeReport},
		{"white paper", "新时代的中国网络法治建设白皮书", "", "", TypeReport},
		{"infographic about a plan", "一图读懂《广州市城市更新条例》", "", "", TypeWebpage},
		{"law enforcement is not a law", "坚持严格规范公正文明执法", "", "", TypeWebpage},
		{"news", "我市召开数字政府建设推进会", "", "", TypeWebpage},
		{"press Q&A", "国家发展改革委有关负责同志就《关于推动数据基础制度建设的意见》答记者问", "", "", TypeWebpage},
		{"a 文号 alone makes it an official document", "市人民政府关于调整市级部分行政权力事项", "", "国办发〔2023〕5号", TypeRegulation},
		{"generic documents column", "市政府第十二次常务会议纪要摘登", "政府文件", "", TypeRegulation},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := Type(Work{Title: c.title, Category: c.category, DocNo: c.docNo})
			if got != c.want {
				t.Errorf("Type(%q, category %q, 文号 %q) = %s, want %s", c.title, c.category, c.docNo, got, c.want)
			}
		})
	}
}
