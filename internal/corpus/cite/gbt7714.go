package cite

import "strings"

// GB/T 7714-2015 document type codes (文献类型标识) used here, with the
// carrier code OL (联机网络): every corpus work was collected online.
//
//   - A (档案) for laws, regulations and other official documents (公文):
//     the standard's own example of a government document is
//     "北京市人民政府办公厅. 关于转发北京市企业投资项目核准暂行实施办法的通知:
//     京政办发〔2005〕37号[A/OL]. (2005-07-12)[2011-07-12]. http://…".
//   - R (报告) for plans and reports, as the standard's example
//     "中华人民共和国国务院新闻办公室. 国防白皮书: 中国武装力量的多样化运用[R/OL]".
//   - EB (电子公告) for other web pages (news, 解读, Q&A).
var gbtCode = map[string]string{
	TypeLegislation: "A",
	TypeRegulation:  "A",
	TypeReport:      "R",
	TypeWebpage:     "EB",
}

// GBT7714 is w as a GB/T 7714-2015 reference to an electronic resource
// (§4.8 电子资源, §8 著录细则):
//
//	主要责任者. 题名: 其他题名信息[文献类型标识/OL]. (更新或修改日期)[引用日期]. 获取和访问路径.
//
// The issuing bodies are the 主要责任者 (more than three: the first
// three and “, 等”); the 文号 is the 其他题名信息; the 发布日期 is the
// date in parentheses and the access day in China the 引用日期. A part
// that is unknown is left out with its punctuation: no issuing body
// starts the entry with the title, as the numeric (顺序编码制) system
// allows. An invalid work yields "" and the error CSLJSON would give.
func GBT7714(w Work) (string, error) {
	c, err := check(w)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if len(c.issuers) > 0 {
		names := c.issuers
		etal := ""
		if len(names) > 3 {
			names, etal = names[:3], ", 等"
		}
		b.WriteString(trimStop(strings.Join(names, ", ") + etal))
		b.WriteString(". ")
	}
	b.WriteString(trimStop(c.Title))
	if c.DocNo != "" {
		b.WriteString(": ")
		b.WriteString(trimStop(c.DocNo))
	}
	b.WriteString("[" + gbtCode[c.typ] + "/OL]. ")
	if !c.issued.zero() || !c.accessed.zero() {
		if !c.issued.zero() {
			b.WriteString("(" + c.issued.iso() + ")")
		}
		if !c.accessed.zero() {
			b.WriteString("[" + c.accessed.iso() + "]")
		}
		b.WriteString(". ")
	}
	b.WriteString(c.URL)
	b.WriteString(".")
	return b.String(), nil
}

// trimStop drops a full stop the part already ends with, so the
// separator that follows is not doubled.
func trimStop(s string) string {
	return strings.TrimRight(strings.TrimSpace(s), ".。 ")
}
