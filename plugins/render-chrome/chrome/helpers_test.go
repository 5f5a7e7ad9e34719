package chrome

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/sdk/stage"
)

// testLog keeps the browser's chatter out of test output unless -v asks.
func testLog(t testing.TB) *slog.Logger {
	level := slog.LevelWarn
	if testing.Verbose() {
		level = slog.LevelInfo
	}
	return slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
}

// needChrome skips when no browser is installed.
func needChrome(t testing.TB) {
	t.Helper()
	if _, err := findChrome(os.Getenv("MDPRESS_CHROME")); err != nil {
		t.Skipf("no Chromium on this machine (%v); install the chromium package", err)
	}
}

// needTool skips when a poppler or qpdf tool is missing.
func needTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed (poppler-utils / qpdf)", name)
	}
}

// newRenderer configures a renderer with the given JSON config and closes
// it when the test ends.
func newRenderer(t testing.TB, config string, opts ...Option) *Renderer {
	t.Helper()
	needChrome(t)
	r := New(testLog(t), opts...)
	t.Cleanup(func() { _ = r.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if config == "" {
		config = `{"tabs":2}`
	}
	if _, err := r.Configure(ctx, &stage.ConfigureRequest{Config: []byte(config)}); err != nil {
		t.Fatalf("Configure: %v", err)
	}
	return r
}

var (
	sharedOnce sync.Once
	shared     *Renderer
	sharedErr  error
)

// sharedRenderer is one default renderer for the tests that only print, so
// that they pay for one browser start. TestMain closes it.
func sharedRenderer(t testing.TB) *Renderer {
	t.Helper()
	needChrome(t)
	sharedOnce.Do(func() {
		shared = New(testLog(t))
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_, sharedErr = shared.Configure(ctx, &stage.ConfigureRequest{Config: []byte(`{"tabs":2}`)})
	})
	if sharedErr != nil {
		t.Fatalf("Configure: %v", sharedErr)
	}
	return shared
}

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		_ = shared.Close()
	}
	os.Exit(code)
}

// doc is the minimal document the style stage makes: an @page rule with
// the size, margins and a page number in a margin box, then the caller's
// CSS last.
type doc struct {
	size      stage.PageSize
	numbering string // "bottom-center", "bottom-left", "bottom-right" or ""
	css       string
	body      string
}

func (p doc) html() string {
	size := p.size
	if size.Name == "" {
		size, _ = papers.Lookup("A4")
	}
	margin := ""
	if p.numbering != "" {
		margin = fmt.Sprintf("@%s { content: counter(page); font: 10pt sans-serif; }", p.numbering)
	}
	return fmt.Sprintf(`<!doctype html>
<html><head><meta charset="utf-8"><title>test</title>
<style>
@page { size: %.2fpt %.2fpt; margin: 54pt 54pt 54pt 54pt; %s }
body { font: 12pt sans-serif; }
</style>
<style>%s</style>
</head><body>
%s
</body></html>`, size.WidthPt, size.HeightPt, margin, p.css, p.body)
}

func render(t testing.TB, r *Renderer, p doc) *stage.RenderResponse {
	t.Helper()
	if p.size.Name == "" {
		p.size, _ = papers.Lookup("A4")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := r.Render(ctx, &stage.RenderRequest{HTML: p.html(), Page: p.size})
	if err != nil {
		t.Fatalf("Render: %v", err)
	}
	if !bytes.HasPrefix(res.PDF, []byte("%PDF-")) {
		t.Fatalf("not a PDF: %q", res.PDF[:min(20, len(res.PDF))])
	}
	return res
}

// writePDF puts pdf in a temp file for the command-line tools.
func writePDF(t testing.TB, pdf []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "out.pdf")
	if err := os.WriteFile(path, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	needTool(t, name)
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v", name, args, err)
	}
	return string(out)
}

// pdfText is what pdftotext reads from pdf.
func pdfText(t testing.TB, pdf []byte) string {
	return run(t, "pdftotext", "-layout", writePDF(t, pdf), "-")
}

// pdfInfo returns pdfinfo's fields.
func pdfInfo(t testing.TB, pdf []byte) map[string]string {
	out := run(t, "pdfinfo", writePDF(t, pdf))
	info := map[string]string{}
	for line := range strings.Lines(out) {
		k, v, ok := strings.Cut(line, ":")
		if ok {
			info[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return info
}

var pageSizeRE = regexp.MustCompile(`^([\d.]+) x ([\d.]+) pts`)

// pdfPageSize returns the first page's size in points.
func pdfPageSize(t testing.TB, info map[string]string) (w, h float64) {
	t.Helper()
	m := pageSizeRE.FindStringSubmatch(info["Page size"])
	if m == nil {
		t.Fatalf("no page size in %q", info["Page size"])
	}
	w, _ = strconv.ParseFloat(m[1], 64)
	h, _ = strconv.ParseFloat(m[2], 64)
	return w, h
}

// bboxWord is one word of pdftotext -bbox.
type bboxWord struct {
	page                   int
	text                   string
	xMin, yMin, xMax, yMax float64
}

var (
	bboxPageRE = regexp.MustCompile(`<page width="([\d.]+)" height="([\d.]+)">`)
	bboxWordRE = regexp.MustCompile(`<word xMin="([\d.]+)" yMin="([\d.]+)" xMax="([\d.]+)" yMax="([\d.]+)">([^<]*)</word>`)
)

// pdfWords returns every word with its box, and the page width and height.
func pdfWords(t testing.TB, pdf []byte) (words []bboxWord, width, height float64) {
	out := run(t, "pdftotext", "-bbox", writePDF(t, pdf), "-")
	pageNo := 0
	for line := range strings.Lines(out) {
		if m := bboxPageRE.FindStringSubmatch(line); m != nil {
			pageNo++
			width, _ = strconv.ParseFloat(m[1], 64)
			height, _ = strconv.ParseFloat(m[2], 64)
			continue
		}
		if m := bboxWordRE.FindStringSubmatch(line); m != nil {
			w := bboxWord{page: pageNo, text: html.UnescapeString(m[5])}
			w.xMin, _ = strconv.ParseFloat(m[1], 64)
			w.yMin, _ = strconv.ParseFloat(m[2], 64)
			w.xMax, _ = strconv.ParseFloat(m[3], 64)
			w.yMax, _ = strconv.ParseFloat(m[4], 64)
			words = append(words, w)
		}
	}
	return words, width, height
}

// countPixels rasterises page 1 at a low resolution and counts the pixels
// for which match is true.
func countPixels(t testing.TB, pdf []byte, match func(r, g, b byte) bool) int {
	t.Helper()
	dir := t.TempDir()
	needTool(t, "pdftoppm")
	out := filepath.Join(dir, "page")
	if err := exec.Command("pdftoppm", "-r", "24", "-f", "1", "-l", "1", writePDF(t, pdf), out).Run(); err != nil {
		t.Fatalf("pdftoppm: %v", err)
	}
	files, _ := filepath.Glob(out + "*.ppm")
	if len(files) != 1 {
		t.Fatalf("pdftoppm wrote %v", files)
	}
	img, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	// P6 header: magic, width, height, maxval, then one whitespace byte.
	fields := 0
	i := 0
	for fields < 4 && i < len(img) {
		for i < len(img) && (img[i] == ' ' || img[i] == '\n' || img[i] == '\r' || img[i] == '\t') {
			i++
		}
		for i < len(img) && !(img[i] == ' ' || img[i] == '\n' || img[i] == '\r' || img[i] == '\t') {
			i++
		}
		fields++
	}
	px := img[i+1:]
	n := 0
	for j := 0; j+2 < len(px); j += 3 {
		if match(px[j], px[j+1], px[j+2]) {
			n++
		}
	}
	return n
}

func isRed(r, g, b byte) bool   { return r > 200 && g < 80 && b < 80 }
func isGreen(r, g, b byte) bool { return g > 150 && r < 80 && b < 80 }
