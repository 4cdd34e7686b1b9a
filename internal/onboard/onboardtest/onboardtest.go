// Package onboardtest builds what the onboarding wizard's tests read and
// check against, in the wizard's own package and in the console's: the
// simulated counties with the configuration the simulation writes for
// them, a polite fetcher pinned to them, and the files a test compares.
package onboardtest

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"zhizhi/internal/config"
	"zhizhi/internal/fetch"
	"zhizhi/internal/model"
	"zhizhi/internal/sim"
	"zhizhi/internal/store"
)

// Counties is a simulated web of four generated counties (c001 and c003
// run gkmlpt, c002 and c004 are template sites) with the configuration
// the simulation writes for them: the truth the wizard's findings are
// held to.
type Counties struct {
	Sim   *sim.World
	Truth *config.Bundle // the counties' configuration
	Dir   string         // its directory, departments.csv included
}

// StartCounties starts the counties and writes their configuration as an
// addition to the configuration directory bundled.
func StartCounties(t testing.TB, bundled string) *Counties {
	t.Helper()
	w, err := sim.Start(context.Background(), sim.Options{Seed: 1, Counties: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(w.Close)
	dir := filepath.Join(t.TempDir(), "counties")
	if err := w.WriteCountyConfig(dir, bundled); err != nil {
		t.Fatal(err)
	}
	truth, problems := config.Load(dir)
	if config.HasErrors(problems) {
		t.Fatalf("county config: %v", config.Errors(problems))
	}
	return &Counties{Sim: w, Truth: truth, Dir: dir}
}

// Site is the counties' configured site of host.
func (c *Counties) Site(t testing.TB, host string) *config.SiteFile {
	t.Helper()
	for _, s := range c.Truth.Sites {
		if u, err := url.Parse(s.BaseURL); err == nil && strings.EqualFold(u.Host, host) {
			return s
		}
	}
	t.Fatalf("no county site %s in the sim's configuration", host)
	return nil
}

// Departments reads the departments CSV at path.
func Departments(t testing.TB, path string) []model.Department {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	depts, bad := config.ReadDepartmentsCSV(f, path)
	if len(bad) > 0 {
		t.Fatalf("%s: %v", path, bad)
	}
	return depts
}

// ImportDepartments imports the departments CSV at path into st.
func ImportDepartments(t testing.TB, st *store.Store, path string) {
	t.Helper()
	if _, _, err := st.ImportDepartments(context.Background(), Departments(t, path)); err != nil {
		t.Fatal(err)
	}
}

// ClosedAddr is a loopback address nothing listens on: a host pinned to it
// does not answer.
func ClosedAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Client is a polite fetcher at the default pace, pinned to the hosts of
// resolve (host=addr,…), with the browser tier when browser is not nil.
func Client(t testing.TB, st *store.Store, resolve string, browser fetch.BrowserStarter) *fetch.Client {
	t.Helper()
	rm, err := fetch.ParseResolveMap(resolve)
	if err != nil {
		t.Fatal(err)
	}
	c, err := fetch.NewClient(fetch.ClientOptions{Store: st, Resolve: rm, Version: "test",
		ContactURL: "https://zhizhi.example/contact", Browser: browser})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TreeSum fingerprints every file under dir, so a test can show that
// nothing there changed.
func TreeSum(t testing.TB, dir string) string {
	t.Helper()
	h := sha256.New()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fmt.Fprintln(h, p)
		if d.IsDir() {
			return nil
		}
		b, err := os.ReadFile(p)
		h.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// WriteFile writes body to path, making its directory.
func WriteFile(t testing.TB, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}

// CopyFile copies the file from to to, making to's directory.
func CopyFile(t testing.TB, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	WriteFile(t, to, string(b))
}

// ZipFile is one file of a zip archive.
type ZipFile struct{ Name, Body string }

// Unzip reads every file of the zip archive z, in the archive's order.
func Unzip(t testing.TB, z []byte) []ZipFile {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(z), int64(len(z)))
	if err != nil {
		t.Fatal(err)
	}
	var files []ZipFile
	for _, f := range zr.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, ZipFile{Name: f.Name, Body: string(b)})
	}
	return files
}
