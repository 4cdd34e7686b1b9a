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
	File string
	Line int
	Msg  string
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
	bad := func(line int, format string, args ...any) {
		errs = append(errs, LineError{File: name, Line: line, Msg: fmt.Sprintf(format, args...)})
	}
	raw, err := io.ReadAll(r)
	if err != nil {
		bad(0, "cannot read: %v", err)
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
			bad(1, "the file is empty — write a header line: dept_id,dept_name,parent_dept_id,…")
		} else {
			bad(1, "cannot read the header: %v", csvErrText(err))
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
			bad(1, "column %s appears twice (columns %d and %d) — keep one", h, prev+1, i+1)
			continue
		}
		col[h] = i
	}
	for _, req := range []string{"dept_id", "dept_name"} {
		if _, ok := col[req]; !ok {
			bad(1, "header has no %s column — add it (DEPT_ID/DEPT_NAME or dept_id/dept_name)", req)
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
				bad(pe.StartLine, "%s — check the quotes on this line", csvErrText(err))
				continue
			}
			bad(0, "cannot read: %v", err)
			break
		}
		line, _ := cr.FieldPos(0)
		if len(rec) != len(header) {
			bad(line, "has %d columns, the header has %d — check for a missing or extra comma", len(rec), len(header))
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
		fail := func(format string, args ...any) {
			bad(line, format, args...)
			lineOK = false
		}
		if s := get("dept_id"); s == "" {
			fail("dept_id is missing — every department needs its OA DEPT_ID")
		} else if v, err := strconv.ParseInt(s, 10, 64); err != nil || v <= 0 {
			fail("dept_id %q is not a positive integer", s)
		} else if first, dup := seen[v]; dup {
			fail("dept_id %d is repeated (first on line %d) — keep one row per department", v, first)
		} else {
			d.DeptID = v
			seen[v] = line
		}
		d.DeptName = get("dept_name")
		if d.DeptName == "" {
			fail("dept_name is empty")
		}
		optInt64 := func(c string) *int64 {
			s := get(c)
			if s == "" {
				return nil
			}
			v, err := strconv.ParseInt(s, 10, 64)
			if err != nil {
				fail("%s %q is not an integer", c, s)
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
				fail("%s %q is not an integer", c, s)
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
				fail("updated_at %q is not a date — use 2024-03-05 or 2024-03-05 14:30:00", s)
			} else {
				d.UpdatedAt = &t
			}
		}
		for _, lim := range deptLengths {
			if n := len([]rune(get(lim.col))); n > lim.max {
				fail("%s is %d characters long, at most %d fit", lim.col, n, lim.max)
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
				"save the file as UTF-8 and import again"}
		}
		if firstGB == 0 {
			firstGB = i + 1
		}
	}
	if firstUTF8 > 0 {
		return "", &LineError{Line: firstGB, Msg: fmt.Sprintf("this line is GB18030/GBK text but line %d is UTF-8 — "+
			"save the whole file in one encoding (UTF-8) and import again", firstUTF8)}
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
