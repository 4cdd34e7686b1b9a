package cite

import "time"

// The works the format tests cite, written as a collector would store
// them.
var (
	accessedMay3 = time.Date(2024, 5, 3, 10, 0, 0, 0, time.FixedZone("CST", 8*3600))

	// The requirement's example shape: an office notice with a 文号.
	noticeWork = Work{
		ID: "W2024GOV0001", Revision: 2, Release: "2024.05.1",
		Title:       "国务院办公厅关于加强政务数据共享的通知",
		IssuingBody: "国务院办公厅",
		Authority:   "中华人民共和国中央人民政府",
		DocNo:       "国办发〔2024〕12号",
		Category:    "规范性文件",
		Issued:      "2024-05-01",
		Accessed:    accessedMay3,
		URL:         "https://www.gov.cn/zhengce/content/202405/content_6948001.htm",
		ReleaseURL:  "https://corpus.example.cn/releases/2024.05.1/works/W2024GOV0001",
	}
	// A plan without a 文号.
	planWork = Work{
		ID: "W2021GD0042", Revision: 1, Release: "2024.05.1",
		Title:       "广东省国民经济和社会发展第十四个五年规划和2035年远景目标纲要",
		IssuingBody: "广东省人民政府",
		Category:    "规划计划",
		Issued:      "2021-04-25",
		Accessed:    accessedMay3,
		URL:         "http://www.gd.gov.cn/zwgk/wjk/qbwj/yf/content/post_3268751.html",
	}
	// A law promulgated by a presidential order.
	lawWork = Work{
		ID: "W2021NPC0007", Revision: 3, Release: "2024.05.1",
		Title:       "中华人民共和国数据安全法",
		IssuingBody: "全国人民代表大会常务委员会",
		DocNo:       "中华人民共和国主席令第八十四号",
		Category:    "法律",
		Issued:      "2021-06-10",
		Accessed:    accessedMay3,
		URL:         "http://www.npc.gov.cn/npc/c30834/202106/7c9af12f51334a73b56d7938f99a788a.shtml",
	}
	// An explainer page with no issuing body collected.
	explainerWork = Work{
		ID: "W2024GZ0310", Revision: 0, Release: "2024.05.1",
		Title:    "一图读懂《广州市城市更新条例》",
		Category: "政策解读",
		Issued:   "2024-03-15",
		Accessed: accessedMay3,
		URL:      "https://www.gz.gov.cn/zwgk/zcjd/tjjd/content/post_9532001.html",
	}
	// Four co-issuing bodies, written with spaces as on the document.
	jointWork = Work{
		ID: "W2024NDRC0123", Revision: 1, Release: "2024.05.1",
		Title:       "关于推进基础设施领域不动产投资信托基金常态化发行的通知",
		IssuingBody: "国家发展改革委 财政部 自然资源部 住房城乡建设部",
		DocNo:       "发改投资〔2024〕123号",
		Issued:      "2024-07-26",
		Accessed:    accessedMay3,
		URL:         "https://www.ndrc.gov.cn/xxgk/zcfb/tz/202407/t20240726_1391895.html",
	}
)
