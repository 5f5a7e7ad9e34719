package render

import (
	"bytes"
	"context"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

// The system fallbacks CI installs (fonts-droid-fallback, fonts-nanum).
var (
	droidFont = SystemFallbacks[0].Path
	nanumFont = SystemFallbacks[1].Path
	nanumBold = SystemFallbacks[1].Bold
)

func needFallbacks(t testing.TB) {
	t.Helper()
	for _, p := range []string{droidFont, nanumFont, nanumBold} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("no %s (apt-get install fonts-droid-fallback fonts-nanum)", p)
		}
	}
}

// fallbackRenderer is a renderer configured with config and the system
// fallbacks as its default.
func fallbackRenderer(t testing.TB, config string, log *slog.Logger) *Renderer {
	t.Helper()
	r := New(log, WithFonts(mustFonts(t)), WithSystemFallbacks(SystemFallbacks...),
		WithClock(func() time.Time { return time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC) }))
	if _, err := r.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(config)}); err != nil {
		t.Fatal(err)
	}
	return r
}

const cjkMarkdown = `# 中文标题と日本語の見出し

中文段落：我们在这里写一些汉字，测试回退字体。

日本語の段落です。ひらがなとカタカナ、漢字。

한국어 문단입니다. 안녕하세요, 세계.

| 表头 | 열 |
|---|---|
| 表格单元格 | 표 셀 |
`

// cjkLines are the lines of cjkMarkdown as they must read back.
var cjkLines = []string{
	"中文标题と日本語の見出し",
	"中文段落：我们在这里写一些汉字，测试回退字体。",
	"日本語の段落です。ひらがなとカタカナ、漢字。",
	"한국어 문단입니다. 안녕하세요, 세계.",
	"表头 열", "表格单元格 표 셀",
}

// pdfFonts returns pdffonts' rows: name, type, encoding, emb, sub.
func pdfFonts(t testing.TB, pdf []byte) [][]string {
	t.Helper()
	var rows [][]string
	for _, line := range strings.Split(runFile(t, pdf, "pdffonts"), "\n")[2:] {
		if f := strings.Fields(line); len(f) >= 5 {
			rows = append(rows, f[:5])
		}
	}
	return rows
}

// TestFallbackCJK: with the fallback fonts configured, Chinese, Japanese
// and Korean in a heading, paragraphs and table cells are drawn as text
// that reads back exactly, from subsets of the fallback fonts embedded as
// the DejaVu ones are. It drew each character as U+FFFD.
func TestFallbackCJK(t *testing.T) {
	needFallbacks(t)
	needTool(t, "pdftotext")
	r := fallbackRenderer(t, `{"fallbackFonts": ["`+droidFont+`", "`+nanumFont+`"]}`, nil)
	for _, th := range themes {
		resp := renderPDF(t, r, req{doc: markdownDoc(t, cjkMarkdown), tokens: th.tokens})
		text := pdfText(t, resp.PDF)
		if strings.ContainsRune(text, '\uFFFD') {
			t.Errorf("%s: U+FFFD in %q", th.name, text)
		}
		got := map[string]bool{}
		for _, line := range strings.Split(text, "\n") {
			got[strings.TrimSpace(line)] = true
		}
		for _, want := range cjkLines {
			if !got[want] {
				t.Errorf("%s: no line %q in %q", th.name, want, text)
			}
		}
		subsets := map[string]bool{}
		for _, f := range pdfFonts(t, resp.PDF) {
			name, _, _ := strings.Cut(f[0], "+")
			base := strings.TrimPrefix(f[0], name+"+")
			if len(name) == 6 && strings.Join(f[1:], " ") == "TrueType Custom yes yes" {
				subsets[base] = true
			}
		}
		if !subsets["DroidSansFallbackFull"] || !subsets["NanumGothic"] {
			t.Errorf("%s: pdffonts lists subsets %v, want DroidSansFallbackFull and NanumGothic", th.name, subsets)
		}
	}
}

// TestCJKWraps: lines break between ideographs, as a browser breaks them,
// never before closing punctuation: a run of them no longer moves whole to
// the next line, leaving the one before it short, and no line passes the
// margin.
func TestCJKWraps(t *testing.T) {
	needFallbacks(t)
	needTool(t, "pdftotext")
	r := fallbackRenderer(t, `{}`, nil)
	sentence := "中文段落没有空格这是一个很长的句子用来测试换行是否正确处理。"
	src := "Intro " + strings.Repeat(sentence, 6) + "\n\n| 列 | 说明 |\n|---|---|\n| a | " + strings.Repeat(sentence, 3) + " |\n"
	for _, page := range []string{"A4", "A6"} {
		resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: basicTokens, page: page})
		pages := pdfBoxes(t, resp.PDF)
		m := scaledMargins(basicTokens.Margins, page)
		checkInsideMargins(t, pages, m, 1)
		right := pages[0].W - m[1]
		var first *bboxWord
		end, lines := 0.0, 0
		for pi, p := range pages {
			for i, w := range p.Words {
				if first == nil && strings.HasPrefix(w.Text, "Intro") {
					first = &p.Words[i]
				}
				if first != nil && pi == 0 && math.Abs((w.Y0+w.Y1)-(first.Y0+first.Y1))/2 < basicTokens.FontSize/2 {
					end = max(end, w.X1)
				}
				if strings.ContainsRune(w.Text, '句') {
					lines++
				}
				if strings.HasPrefix(w.Text, "。") {
					t.Errorf("%s: a line starts with %q", page, w.Text)
				}
			}
		}
		if first == nil {
			t.Fatalf("%s: no Intro", page)
		}
		// The line of "Intro" is filled with ideographs to within two of
		// the margin.
		if end < right-2*basicTokens.FontSize {
			t.Errorf("%s: the first line ends at %.1f, the margin is at %.1f", page, end, right)
		}
		if lines < 4 {
			t.Errorf("%s: the text took %d lines", page, lines)
		}
		if got := strings.Join(strings.Fields(bodyText(t, resp.PDF)), ""); !strings.Contains(got, "Intro"+strings.Repeat(sentence, 6)) {
			t.Errorf("%s: the paragraph does not read back in order: %q", page, got)
		}
	}
}

// TestNoFallbackUnchanged: with no fallback fonts, characters DejaVu lacks
// are drawn as U+FFFD as before, and only the system fallbacks that exist
// are the default.
func TestNoFallbackUnchanged(t *testing.T) {
	needFallbacks(t)
	needTool(t, "pdftotext")
	var logs bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logs, nil))
	none := fallbackRenderer(t, `{"fallbackFonts": []}`, log)
	resp := renderPDF(t, none, req{doc: markdownDoc(t, "中文 and 한국어."), tokens: basicTokens})
	if got := strings.TrimSpace(bodyText(t, resp.PDF)); got != "\uFFFD\uFFFD and \uFFFD\uFFFD\uFFFD." {
		t.Errorf("no fallback: text %q", got)
	}
	for _, f := range pdfFonts(t, resp.PDF) {
		if !strings.Contains(f[0], "DejaVu") {
			t.Errorf("no fallback: font %s embedded", f[0])
		}
	}
	if !strings.Contains(logs.String(), "no fallback fonts") {
		t.Errorf("log %q does not say there are no fallback fonts", logs.String())
	}

	// The default takes the system fallbacks that exist.
	logs.Reset()
	r := New(log, WithFonts(mustFonts(t)), WithSystemFallbacks(FallbackFont{Path: droidFont}, FallbackFont{Path: "/nonexistent/font.ttf"}))
	if _, err := r.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(`{}`)}); err != nil {
		t.Fatal(err)
	}
	resp = renderPDF(t, r, req{doc: markdownDoc(t, "中文 and 한국어."), tokens: basicTokens})
	if got := strings.TrimSpace(bodyText(t, resp.PDF)); got != "中文 and \uFFFD\uFFFD\uFFFD." {
		t.Errorf("default: text %q", got)
	}
	if l := logs.String(); !strings.Contains(l, "fallback fonts in use") || !strings.Contains(l, droidFont) || strings.Contains(l, "nonexistent") {
		t.Errorf("log %q does not name the fallback in use alone", l)
	}
}

// TestFallbackConfigErrors: a fallback that cannot be read or used is an
// invalid config naming the file, at Configure.
func TestFallbackConfigErrors(t *testing.T) {
	dir := t.TempDir()
	ttf, err := fonts.File(0)
	if err != nil {
		t.Fatal(err)
	}
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	otf := write("cff.otf", append([]byte("OTTO"), ttf[4:]...))
	ttc := write("set.ttc", append([]byte("ttcf"), ttf[4:]...))
	text := write("notes.ttf", []byte("not a font at all"))
	for _, tc := range []struct{ json, want string }{
		{`{"fallbackFonts": ["` + dir + `/missing.ttf"]}`, dir + "/missing.ttf does not exist"},
		{`{"fallbackFonts": ["` + otf + `"]}`, otf + ": an OpenType font with CFF outlines"},
		{`{"fallbackFonts": ["` + ttc + `"]}`, ttc + ": a font collection"},
		{`{"fallbackFonts": ["` + text + `"]}`, text + ": not a TrueType font"},
		{`{"fallbackFonts": [""]}`, "empty path"},
		{`{"fallbackFonts": "` + otf + `"}`, "fallbackFonts must be a list of paths or {path, bold}"},
	} {
		r := New(nil, WithFonts(mustFonts(t)))
		_, err := r.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(tc.json)})
		if err == nil || stage.CodeOf(err) != stage.CodeInvalid || !strings.Contains(stage.SafeMessage(err), tc.want) {
			t.Errorf("Configure(%s) = %v, want an invalid config containing %q", tc.json, err, tc.want)
		}
	}
}

// manyCJK is a document drawing n distinct ideographs, 40 to a paragraph.
func manyCJK(n int) string {
	var s strings.Builder
	s.WriteString("# 千字文\n\n")
	for i := range n {
		s.WriteRune(rune(0x4e00 + i))
		if i%40 == 39 {
			s.WriteString("\n\n")
		}
	}
	return s.String()
}

// TestManyCJKCharacters holds a document of 5,000 distinct ideographs (23
// fonts of one fallback face) to the bounds the README states: every
// character reads back, and the render peaks under 64 MiB of heap. The CPU
// time is BenchmarkRenderCJK's.
func TestManyCJKCharacters(t *testing.T) {
	needFallbacks(t)
	needTool(t, "pdftotext")
	const n, heapBound = 5000, 64 << 20
	r := fallbackRenderer(t, `{}`, nil)
	d := markdownDoc(t, manyCJK(n))
	runtime.GC()
	peak := 0
	stop := plugintest.SamplePeakHeap(&peak)
	start := time.Now()
	resp := renderPDF(t, r, req{doc: d, tokens: basicTokens})
	took := time.Since(start)
	stop()
	t.Logf("%d characters: %d pages, %v, peak heap %d MiB, PDF %d KB", n, resp.Pages, took, peak>>20, len(resp.PDF)>>10)
	if peak > heapBound {
		t.Errorf("peak heap %d MiB, over %d MiB", peak>>20, heapBound>>20)
	}
	got := strings.Join(strings.Fields(bodyText(t, resp.PDF)), "")
	if want := strings.Join(strings.Fields(manyCJK(n)[len("# "):]), ""); got != want {
		t.Errorf("read back %d characters, want %d", len([]rune(got)), len([]rune(want)))
	}
	droid := 0
	for _, f := range pdfFonts(t, resp.PDF) {
		if strings.HasSuffix(f[0], "+DroidSansFallbackFull") {
			droid++
		}
	}
	if want := (n + 5 + 222) / 223; droid < want {
		t.Errorf("%d DroidSansFallbackFull fonts, want at least %d", droid, want)
	}
}

// BenchmarkRenderCJK renders documents of 500 and 5,000 distinct
// ideographs with the system fallbacks. Run it with
//
//	go test -run '^$' -bench RenderCJK -benchmem ./plugins/render-fpdf/render/
func BenchmarkRenderCJK(b *testing.B) {
	needFallbacks(b)
	r := fallbackRenderer(b, `{}`, nil)
	for _, n := range []int{500, 5000} {
		d := markdownDoc(b, manyCJK(n))
		b.Run("chars="+itoa(n), func(b *testing.B) {
			page, _ := papers.Lookup("A4")
			benchRender(b, r, &stage.RenderRequest{Document: d, Tokens: modernTokens, Page: page, Numbering: stage.NumberingCenter})
		})
	}
}

// TestFallbackBinary: the plugin binary, configured over gRPC as the host
// configures it, with its defaults, draws CJK with the system fallbacks.
func TestFallbackBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the plugin binary; skipped in -short mode")
	}
	needFallbacks(t)
	needTool(t, "pdftotext")
	bin := plugintest.Build(t, "github.com/mdpress/mdpress/plugins/render-fpdf")
	c := plugintest.Launch(t, bin, stage.NameRender, plugintest.Config{JSON: `{}`})
	page, _ := papers.Lookup("A4")
	resp, err := c.Render(context.Background(), &stage.RenderRequest{Document: markdownDoc(t, cjkMarkdown), Tokens: modernTokens, Page: page})
	if err != nil {
		t.Fatal(err)
	}
	text := pdfText(t, resp.PDF)
	for _, want := range cjkLines {
		if !strings.Contains(text, want) {
			t.Errorf("no %q in %q", want, text)
		}
	}
}
