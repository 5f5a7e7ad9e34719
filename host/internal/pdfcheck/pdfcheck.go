// Package pdfcheck reads PDFs back the way a reader would, through
// poppler's pdfinfo, pdftotext and pdftoppm, for the host's tests.
package pdfcheck

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// Require skips the test when poppler-utils is missing.
func Require(t testing.TB) {
	t.Helper()
	for _, tool := range []string{"pdfinfo", "pdftotext", "pdftoppm"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s not installed (apt-get install poppler-utils)", tool)
		}
	}
}

// Info is what pdfinfo reports.
type Info struct {
	Pages    int
	WidthPt  float64
	HeightPt float64
	Title    string
	Creator  string
	Producer string
	Tagged   bool
	Raw      string
}

var sizeRE = regexp.MustCompile(`Page size:\s+([\d.]+) x ([\d.]+) pts`)

// Read runs pdfinfo on pdf.
func Read(t testing.TB, pdf []byte) Info {
	t.Helper()
	path := write(t, pdf)
	out, err := exec.Command("pdfinfo", path).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfinfo: %v\n%s", err, out)
	}
	info := Info{Raw: string(out)}
	for _, line := range strings.Split(string(out), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		switch k {
		case "Pages":
			info.Pages, _ = strconv.Atoi(v)
		case "Title":
			info.Title = v
		case "Creator":
			info.Creator = v
		case "Producer":
			info.Producer = v
		case "Tagged":
			info.Tagged = v == "yes"
		}
	}
	if m := sizeRE.FindStringSubmatch(string(out)); m != nil {
		info.WidthPt, _ = strconv.ParseFloat(m[1], 64)
		info.HeightPt, _ = strconv.ParseFloat(m[2], 64)
	}
	return info
}

// Text runs pdftotext -layout on pdf.
func Text(t testing.TB, pdf []byte) string {
	t.Helper()
	out, err := exec.Command("pdftotext", "-layout", write(t, pdf), "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext: %v\n%s", err, out)
	}
	return string(out)
}

// PageText returns the text of each page.
func PageText(t testing.TB, pdf []byte) []string {
	return strings.Split(strings.TrimRight(Text(t, pdf), "\f\n"), "\f")
}

// Word is one word of pdftotext -bbox output on a page.
type Word struct {
	Page                   int
	Text                   string
	XMin, YMin, XMax, YMax float64
	PageW, PageH           float64
}

var (
	pageRE = regexp.MustCompile(`<page width="([\d.]+)" height="([\d.]+)">`)
	wordRE = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)
)

// Words runs pdftotext -bbox and returns every word with its box.
func Words(t testing.TB, pdf []byte) []Word {
	t.Helper()
	out, err := exec.Command("pdftotext", "-bbox", write(t, pdf), "-").CombinedOutput()
	if err != nil {
		t.Fatalf("pdftotext -bbox: %v\n%s", err, out)
	}
	var words []Word
	page := 0
	var pw, ph float64
	for _, line := range strings.Split(string(out), "\n") {
		if m := pageRE.FindStringSubmatch(line); m != nil {
			page++
			pw, _ = strconv.ParseFloat(m[1], 64)
			ph, _ = strconv.ParseFloat(m[2], 64)
			continue
		}
		if m := wordRE.FindStringSubmatch(line); m != nil {
			w := Word{Page: page, Text: m[5], PageW: pw, PageH: ph}
			w.XMin, _ = strconv.ParseFloat(m[1], 64)
			w.YMin, _ = strconv.ParseFloat(m[2], 64)
			w.XMax, _ = strconv.ParseFloat(m[3], 64)
			w.YMax, _ = strconv.ParseFloat(m[4], 64)
			words = append(words, w)
		}
	}
	return words
}

// PPM renders page (1-based) at dpi and returns width, height and RGB bytes.
func PPM(t testing.TB, pdf []byte, page, dpi int) (int, int, []byte) {
	t.Helper()
	out, err := exec.Command("pdftoppm", "-f", strconv.Itoa(page), "-l", strconv.Itoa(page), "-r", strconv.Itoa(dpi), write(t, pdf)).Output()
	if err != nil {
		t.Fatalf("pdftoppm: %v", err)
	}
	var w, h, maxv int
	r := bytes.NewReader(out)
	if _, err := fmt.Fscanf(r, "P6\n%d %d\n%d\n", &w, &h, &maxv); err != nil {
		t.Fatalf("pdftoppm output: %v", err)
	}
	pix := out[len(out)-w*h*3:]
	return w, h, pix
}

func write(t testing.TB, pdf []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}
