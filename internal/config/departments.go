package config

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
	"zhizhi/internal/config/zone"

	"golang.org/x/text/encoding/simplifiedchinese"

	"zhizhi/internal/model"
)

// LineError is a problem with one line of a departments CSV.
type LineError struct {
	File  string
	Line  int
	Field string // the column at fault ("dept_id"), empty for the whole line or file
	Msg   string
	// Said is Msg in the console's Chinese, for the people who upload the
	// file there; the command line prints Msg.
	Said string
}

func (e LineError) Error() string { return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg) }

// deptColumns are the columns of local_department. The OA
// export spells them in upper case (DEPT_ID …); headers are matched without
// regard to case, so both spellings work.
var deptColumns = []string{"dept_id", "dept_name", "parent_dept_id", "dept_level", "dept_code",
	"short_name", "full_name", "state", "order_id", "updated_at"}

// shanghai is the zone of OA timestamps.
var shanghai = zone.Shanghai

// deptLengths are the varchar sizes of local_department.
var deptLengths = []struct {
	col string
	max int
}{{"dept_name", 250}, {"dept_code", 250}, {"short_name", 50}, {"full_name", 500}}

var deptTimeLayouts = []string{
	time.RFC3339,
	"2006-01-02 15:04:05",
	"2006-01-02 15:04",
	"2006-01-02T15:04:05",
	"2006-01-02",
	"2006/1/2 15:04:05",
	"2006/1/2 15:04",
	"2006/1/2",
}

// ReadDepartmentsCSV parses the OA department subset. name is used in error
// messages. It returns every bad line at once; when any line is bad the
// caller must import nothing. Columns other than those of local_department are
// ignored (an OA export carries more); dept_id and dept_name are required.
// An empty or absent state means 1 (active). Timestamps without a zone are
// read as Asia/Shanghai. The file may be UTF-8 (with or without BOM) or
// GB18030/GBK, what OA systems and Excel on Chinese Windows export; a file
// that is neither is refused at its first undecodable line.
func ReadDepartmentsCSV(r io.Reader, name string) ([]model.Department, []LineError) {
	var errs []LineError
	bad := func(line int, field, said, format string, args ...any) {
		errs = append(errs, LineError{File: name, Line: line, Field: field, Msg: fmt.Sprintf(format, args...), Said: said})
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		bad(0, "", "无法读取文件，请重新选择后再试", "cannot read: %v", err)
		return nil, errs
	}
	text, le := decodeCSVText(raw)
	if le != nil {
		le.File = name
		return nil, []LineError{*le}
	}
	cr := csv.NewReader(strings.NewReader(text))
	cr.FieldsPerRecord = -1 // column counts are checked per line to report them all

	header, err := cr.Read()
	if err != nil {
		if errors.Is(err, io.EOF) {
			bad(1, "", "文件是空的：第一行应是表头，如 DEPT_ID,DEPT_NAME,PARENT_DEPT_ID,…", "the file is empty — write a header line: dept_id,dept_name,parent_dept_id,…")
		} else {
			bad(1, "", "无法读取表头（"+csvErrText(err)+"），请检查第一行的引号和逗号", "cannot read the header: %v", csvErrText(err))
		}
		return nil, errs
	}
	col := map[string]int{}
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff") // UTF-8 BOM written by spreadsheet tools
		}
		h = strings.ToLower(strings.TrimSpace(h))
		if h == "" {
			continue
		}
		if prev, dup := col[h]; dup {
			bad(1, h, fmt.Sprintf("表头中 %s 出现了两次（第 %d 列和第 %d 列），请只保留一列", strings.ToUpper(h), prev+1, i+1),
				"column %s appears twice (columns %d and %d) — keep one", h, prev+1, i+1)
			continue
		}
		col[h] = i
	}
	for _, req := range []string{"dept_id", "dept_name"} {
		if _, ok := col[req]; !ok {
			bad(1, req, fmt.Sprintf("表头缺少 %s 列，请补上（DEPT_ID 和 DEPT_NAME 必须有）", strings.ToUpper(req)),
				"header has no %s column — add it (DEPT_ID/DEPT_NAME or dept_id/dept_name)", req)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}

	var depts []model.Department
	seen := map[int64]int{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				bad(pe.StartLine, "", "这一行的引号不成对或位置不对，请检查这一行的引号", "%s — check the quotes on this line", csvErrText(err))
				continue
			}
			bad(0, "", "无法读取文件，请重新选择后再试", "cannot read: %v", err)
			break
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			bad(line, "", fmt.Sprintf("这一行有 %d 列，表头有 %d 列，请检查是否少了或多了逗号", len(rec), len(header)),
				"has %d columns, the header has %d — check for a missing or extra comma", len(rec), len(header))
			continue
		}
		get := func(c string) string {
			if i, ok := col[c]; ok {
				return strings.TrimSpace(rec[i])
			}
			return ""
		}
		var d model.Department
		lineOK := true
		fail := func(field, said, format string, args ...any) {
			bad(line, field, said, format, args...)
			lineOK = false
		}
		if s := get("dept_id"); s == "" {
			fail("dept_id", "DEPT_ID 为空：每个部门都要填写它在 OA 中的部门 ID", "dept_id is missing — every department needs its OA DEPT_ID")
		} else if v, err := strconv.ParseInt(s, 10, 64); err != nil || v <= 0 {
			fail("dept_id", fmt.Sprintf("DEPT_ID「%s」不是正整数，请填写 OA 中的数字部门 ID", s), "dept_id %q is not a positive integer — write the department's numeric OA id", s)
		} else if first, dup := seen[v]; dup {
			fail("dept_id", fmt.Sprintf("DEPT_ID %d 与第 %d 行重复，每个部门只保留一行", v, first),
				"dept_id %d is repeated (first on line %d) — keep one row per department", v, first)
		} else {
			d.DeptID = v
			seen[v] = line
		}
		d.DeptName = get("dept_name")
		if d.DeptName == "" {
			fail("dept_name", "DEPT_NAME 为空，请填写部门名称", "dept_name is empty — write the department's name")
		}
		optInt64 := func(c string) *int64 {
			s := get(c)
			if s == "" {
				return nil
			}
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				fail(c, fmt.Sprintf("%s「%s」不是整数，请填写数字或留空", strings.ToUpper(c), s), "%s %q is not an integer — write a number or leave it empty", c, s)
				return nil
			}
			return &v
		}
		optInt := func(c string) *int {
			s := get(c)
			if s == "" {
				return nil
			}
			v, err := strconv.Atoi(s)
			if err != nil {
				fail(c, fmt.Sprintf("%s「%s」不是整数，请填写数字或留空", strings.ToUpper(c), s), "%s %q is not an integer — write a number or leave it empty", c, s)
				return nil
			}
			return &v
		}
		d.ParentDeptID = optInt64("parent_dept_id")
		d.DeptLevel = optInt("dept_level")
		d.DeptCode = get("dept_code")
		d.ShortName = get("short_name")
		d.FullName = get("full_name")
		d.State = 1
		if st := optInt("state"); st != nil {
			d.State = *st
		}
		d.OrderID = optInt("order_id")
		if s := get("updated_at"); s != "" {
			t, ok := parseDeptTime(s)
			if !ok {
				fail("updated_at", fmt.Sprintf("UPDATED_AT「%s」不是日期，请写成 2024-03-05 或 2024-03-05 14:30:00", s),
					"updated_at %q is not a date — use 2024-03-05 or 2024-03-05 14:30:00", s)
			} else {
				d.UpdatedAt = &t
			}
		}
		for _, lim := range deptLengths {
			if n := len([]rune(get(lim.col))); n > lim.max {
				fail(lim.col, fmt.Sprintf("%s 有 %d 个字，最多 %d 个，请缩短", strings.ToUpper(lim.col), n, lim.max),
					"%s is %d characters long, at most %d fit — shorten it", lim.col, n, lim.max)
			}
		}
		if lineOK {
			depts = append(depts, d)
		}
	}
	if len(errs) > 0 {
		return nil, errs
	}
	return depts, nil
}

// decodeCSVText returns the file as UTF-8 text. Valid UTF-8 is taken as it
// is (a BOM is dropped by the header reader). Anything else must decode as
// GB18030 without a single undecodable byte: reading it any other way would
// store mojibake department names. A file mixing the two (a GBK export with
// lines pasted in from a UTF-8 editor) is refused rather than half-decoded.
func decodeCSVText(raw []byte) (string, *LineError) {
	if utf8.Valid(raw) {
		return string(raw), nil
	}
	firstGB, firstUTF8 := 0, 0
	// \n is a single byte in both encodings and never part of a GB18030
	// character, so lines can be judged one by one.
	for i, line := range bytes.Split(raw, []byte("\n")) {
		if utf8.Valid(line) {
			if firstUTF8 == 0 && hasHan(string(line)) {
				firstUTF8 = i + 1
			}
			continue
		}
		if !cleanGB18030(line) {
			return "", &LineError{Line: i + 1, Msg: "this line is neither UTF-8 nor GB18030/GBK text — " +
				"save the file as UTF-8 and import again", Said: "这一行既不是 UTF-8 也不是 GB18030/GBK 编码的文字，请把文件另存为 UTF-8 后重新导入"}
		}
		if firstGB == 0 {
			firstGB = i + 1
		}
	}
	if firstUTF8 > 0 {
		return "", &LineError{Line: firstGB, Msg: fmt.Sprintf("this line is GB18030/GBK text but line %d is UTF-8 — "+
			"save the whole file in one encoding (UTF-8) and import again", firstUTF8),
			Said: fmt.Sprintf("这一行是 GB18030/GBK 编码，而第 %d 行是 UTF-8，请把整个文件另存为同一种编码（UTF-8）后重新导入", firstUTF8)}
	}
	out, _ := simplifiedchinese.GB18030.NewDecoder().Bytes(raw)
	return string(out), nil
}

// cleanGB18030 reports whether b decodes as GB18030 with no undecodable
// byte (the decoder turns those into U+FFFD).
func cleanGB18030(b []byte) bool {
	out, err := simplifiedchinese.GB18030.NewDecoder().Bytes(b)
	return err == nil && !bytes.ContainsRune(out, utf8.RuneError)
}

// hasHan reports whether s holds a Chinese character: a line of GBK bytes
// that happens to be valid UTF-8 almost never decodes to one.
func hasHan(s string) bool {
	for _, r := range s {
		if r >= 0x4e00 && r <= 0x9fff {
			return true
		}
	}
	return false
}

func parseDeptTime(s string) (time.Time, bool) {
	for _, layout := range deptTimeLayouts {
		if t, err := time.ParseInLocation(layout, s, shanghai); err == nil {
			return t.UTC(), true
		}
	}
	return time.Time{}, false
}

func csvErrText(err error) string {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// DeptRef is one local_dept_id a mapped dept or target names, and where.
type DeptRef struct {
	ID  int64
	Pos Pos
}

// LocalDeptRefs lists, in file order, every local_dept_id the bundle's
// mapped depts and targets name: what must exist in local_department
// before the bundle is written to the database.
func (b *Bundle) LocalDeptRefs() []DeptRef {
	var refs []DeptRef
	for _, s := range b.Sites {
		for _, d := range s.Depts {
			if d.DeptBinding == model.BindingMapped && d.LocalDeptID != nil {
				refs = append(refs, DeptRef{*d.LocalDeptID, firstPos(d.Pos["local_dept_id"], d.At)})
			}
		}
		for _, t := range s.TargetDecls {
			if t.DeptBinding == model.BindingMapped && t.LocalDeptID != nil {
				refs = append(refs, DeptRef{*t.LocalDeptID, firstPos(t.Pos["local_dept_id"], t.At)})
			}
		}
	}
	return refs
}
