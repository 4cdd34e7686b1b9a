package cite

import (
	"testing"
	"time"
)

// TestGBT7714 compares with references written by hand from GB/T
// 7714-2015 §4.8 and §8 (electronic resources), not computed.
func TestGBT7714(t *testing.T) {
	noDate := noticeWork
	noDate.Issued = ""
	noIssuer := noticeWork
	noIssuer.IssuingBody, noIssuer.Authority = "", ""
	monthOnly := planWork
	monthOnly.Issued, monthOnly.Accessed = "2021年4月", time.Time{}
	noDates := explainerWork
	noDates.Issued, noDates.Accessed = "", time.Time{}
	lateEvening := lawWork
	// 17:30 UTC on 2 May is 01:30 on 3 May in Beijing: the 引用日期 is the
	// reader's day in China.
	lateEvening.Accessed = time.Date(2024, 5, 2, 17, 30, 0, 0, time.UTC)
	stops := planWork
	stops.IssuingBody, stops.Title = "广东省人民政府。", "广东省国民经济和社会发展第十四个五年规划和2035年远景目标纲要."

	cases := []struct {
		name string
		work Work
		want string
	}{
		{"the requirement's shape", noticeWork,
			"国务院办公厅. 国务院办公厅关于加强政务数据共享的通知: 国办发〔2024〕12号[A/OL]. (2024-05-01)[2024-05-03]. https://www.gov.cn/zhengce/content/202405/content_6948001.htm."},
		{"missing 发布日期", noDate,
			"国务院办公厅. 国务院办公厅关于加强政务数据共享的通知: 国办发〔2024〕12号[A/OL]. [2024-05-03]. https://www.gov.cn/zhengce/content/202405/content_6948001.htm."},
		{"missing 文号, a plan", planWork,
			"广东省人民政府. 广东省国民经济和社会发展第十四个五年规划和2035年远景目标纲要[R/OL]. (2021-04-25)[2024-05-03]. http://www.gd.gov.cn/zwgk/wjk/qbwj/yf/content/post_3268751.html."},
		{"missing issuing body", noIssuer,
			"国务院办公厅关于加强政务数据共享的通知: 国办发〔2024〕12号[A/OL]. (2024-05-01)[2024-05-03]. https://www.gov.cn/zhengce/content/202405/content_6948001.htm."},
		{"a web page without issuing body", explainerWork,
			"一图读懂《广州市城市更新条例》[EB/OL]. (2024-03-15)[2024-05-03]. https://www.gz.gov.cn/zwgk/zcjd/tjjd/content/post_9532001.html."},
		{"no dates at all", noDates,
			"一图读懂《广州市城市更新条例》[EB/OL]. https://www.gz.gov.cn/zwgk/zcjd/tjjd/content/post_9532001.html."},
		{"month only, no access date", monthOnly,
			"广东省人民政府. 广东省国民经济和社会发展第十四个五年规划和2035年远景目标纲要[R/OL]. (2021-04). http://www.gd.gov.cn/zwgk/wjk/qbwj/yf/content/post_3268751.html."},
		{"a law with its order number", lawWork,
			"全国人民代表大会常务委员会. 中华人民共和国数据安全法: 中华人民共和国主席令第八十四号[A/OL]. (2021-06-10)[2024-05-03]. http://www.npc.gov.cn/npc/c30834/202106/7c9af12f51334a73b56d7938f99a788a.shtml."},
		{"access day in China", lateEvening,
			"全国人民代表大会常务委员会. 中华人民共和国数据安全法: 中华人民共和国主席令第八十四号[A/OL]. (2021-06-10)[2024-05-03]. http://www.npc.gov.cn/npc/c30834/202106/7c9af12f51334a73b56d7938f99a788a.shtml."},
		{"more than three issuers: three and 等", jointWork,
			"国家发展改革委, 财政部, 自然资源部, 等. 关于推进基础设施领域不动产投资信托基金常态化发行的通知: 发改投资〔2024〕123号[A/OL]. (2024-07-26)[2024-05-03]. https://www.ndrc.gov.cn/xxgk/zcfb/tz/202407/t20240726_1391895.html."},
		{"no doubled full stops", stops,
			"广东省人民政府. 广东省国民经济和社会发展第十四个五年规划和2035年远景目标纲要[R/OL]. (2021-04-25)[2024-05-03]. http://www.gd.gov.cn/zwgk/wjk/qbwj/yf/content/post_3268751.html."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := GBT7714(c.work)
			if err != nil {
				t.Fatal(err)
			}
			if got != c.want {
				t.Errorf("GBT7714:\n got %s\nwant %s", got, c.want)
			}
		})
	}
}
