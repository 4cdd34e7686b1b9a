package ui

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"zhizhi/internal/auth"
	"zhizhi/internal/config"
)

// maxDeptCSV bounds an uploaded department file; the OA subset is a few
// hundred lines, far below it.
const maxDeptCSV = 10 << 20

// departmentImport takes the OA department subset as a CSV upload, the file
// `zhizhi dept import` reads, with the same rule: one bad line and nothing
// is imported, every bad line listed with its number. The import and its
// audit entry commit together.
func (c *console) departmentImport(w http.ResponseWriter, r *http.Request) {
	d, err := c.departmentListData(r, "")
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	refuse := func(status int, msg string) {
		c.render(w, r, status, "departments", page{Title: "本地部门", Active: "departments", Error: msg, Data: d})
	}
	r.Body = http.MaxBytesReader(w, r.Body, maxDeptCSV+64<<10)
	file, _, err := r.FormFile("file")
	if err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.As(err, &tooBig):
			refuse(http.StatusRequestEntityTooLarge, "文件过大（上限 10 MB），请检查是否选错了文件。")
		case errors.Is(err, http.ErrMissingFile), errors.Is(err, http.ErrNotMultipart):
			refuse(http.StatusBadRequest, "请选择要导入的部门 CSV 文件。")
		default:
			refuse(http.StatusBadRequest, "无法读取上传的文件，请重新选择后再试。")
		}
		return
	}
	defer file.Close()
	raw, err := io.ReadAll(io.LimitReader(file, maxDeptCSV+1))
	if err != nil {
		refuse(http.StatusBadRequest, "无法读取上传的文件，请重新选择后再试。")
		return
	}
	if len(raw) > maxDeptCSV {
		refuse(http.StatusRequestEntityTooLarge, "文件过大（上限 10 MB），请检查是否选错了文件。")
		return
	}
	depts, bad := config.ReadDepartmentsCSV(bytes.NewReader(raw), "upload")
	if len(bad) > 0 {
		for i, e := range bad {
			if i == maxBadLines {
				d.MoreBad = len(bad) - maxBadLines
				break
			}
			said := e.Said
			if said == "" {
				said = e.Msg
			}
			if e.Line > 0 {
				d.BadLines = append(d.BadLines, fmt.Sprintf("第 %d 行：%s", e.Line, said))
			} else {
				d.BadLines = append(d.BadLines, said)
			}
		}
		refuse(http.StatusBadRequest, fmt.Sprintf("文件中有 %d 行有误，未导入任何部门。请修改下列各行后重新上传。", len(bad)))
		return
	}
	if len(depts) == 0 {
		refuse(http.StatusBadRequest, "文件中没有部门数据（只有表头），未导入任何部门。")
		return
	}
	p, _ := auth.FromContext(r.Context())
	res, err := c.store.ImportDepartmentsBy(r.Context(), p.Actor(), depts)
	if err != nil {
		c.serverError(w, r, err)
		return
	}
	// The tree is read again so it shows what was just imported.
	if d, err = c.departmentListData(r, ""); err != nil {
		c.serverError(w, r, err)
		return
	}
	c.render(w, r, http.StatusOK, "departments", page{Title: "本地部门", Active: "departments",
		Flash: fmt.Sprintf("导入完成：共 %d 个部门，新增 %d 个，更新 %d 个，未变 %d 个。", res.Read, res.Created, res.Updated, res.Unchanged),
		Data:  d})
}
