package fuzz

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/plugins/parse-goldmark/markdown"
	fpdfrender "github.com/mdpress/mdpress/plugins/render-fpdf/render"
	"github.com/mdpress/mdpress/plugins/style-themes/themes"
	"github.com/mdpress/mdpress/sdk/stage"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// stages are configured once per process: the fonts take ~100 ms to parse
// and the fuzzer calls the target thousands of times a second.
var stages = sync.OnceValues(func() (*pipe, error) {
	ctx := context.Background()
	empty := &stage.ConfigureRequest{Config: []byte("{}")}
	p := &pipe{parser: markdown.New(quiet), styler: themes.New(quiet), renderer: fpdfrender.New(quiet)}
	if _, err := p.parser.Configure(ctx, empty); err != nil {
		return nil, err
	}
	if _, err := p.styler.Configure(ctx, empty); err != nil {
		return nil, err
	}
	if _, err := p.renderer.Configure(ctx, empty); err != nil {
		return nil, err
	}
	return p, nil
})

type pipe struct {
	parser   *markdown.Parser
	styler   *themes.Styler
	renderer *fpdfrender.Renderer
}

// convert runs the stages as the pipeline does for a tree renderer: the
// parse skips the HTML, the styler hands over tokens only.
func (p *pipe) convert(ctx context.Context, md, theme, size string, numbering stage.Numbering) (*stage.RenderResponse, error) {
	page, ok := papers.Lookup(size)
	if !ok {
		return nil, fmt.Errorf("no page size %q", size)
	}
	parsed, err := p.parser.Parse(ctx, &stage.ParseRequest{Markdown: md, SkipHTML: true})
	if err != nil {
		return nil, err
	}
	styled, err := p.styler.Style(ctx, &stage.StyleRequest{Theme: theme, Page: page, Numbering: numbering, SkipHTML: true})
	if err != nil {
		return nil, err
	}
	return p.renderer.Render(ctx, &stage.RenderRequest{
		Document: parsed.Document, Tokens: styled.Tokens, Page: page, Numbering: numbering, Watermark: "mdpress free",
	})
}

// Options the fuzzer picks from with one byte.
var (
	themeNames = []string{"modern", "basic"}
	pageNames  = []string{"A4", "A9", "Letter", "Ledger", "B6", "A0"}
	numberings = []stage.Numbering{stage.NumberingCenter, stage.NumberingNone, stage.NumberingLeft, stage.NumberingRight}
)

// perInput is how long one input of a few KiB may take. Such documents
// render in milliseconds; the bound is loose for a shared, busy machine
// and the race detector, and still catches a quadratic path.
const perInput = 3 * time.Second

// FuzzMarkdownFPDF sends Markdown through parse, style and render-fpdf.
// Whatever the input, the answer is a PDF or a stage error a client may
// see (invalid, too large), never a panic (which render turns into an
// internal error) nor a slow render. The seeds' PDFs are also checked by
// pdfinfo, which is too slow to run per fuzzed input.
func FuzzMarkdownFPDF(f *testing.F) {
	for _, s := range seeds(f) {
		f.Add(s, byte(0))
	}
	checked := map[string]bool{}
	f.Fuzz(func(t *testing.T, md string, opts byte) {
		if len(md) > 16<<10 {
			t.Skip("the time bound is for inputs of a few KiB")
		}
		p, err := stages()
		if err != nil {
			t.Fatal(err)
		}
		theme := themeNames[int(opts)%len(themeNames)]
		size := pageNames[int(opts>>1)%len(pageNames)]
		numbering := numberings[int(opts>>4)%len(numberings)]
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		start := time.Now()
		resp, err := p.convert(ctx, md, theme, size, numbering)
		if took := time.Since(start); took > perInput {
			t.Errorf("%d bytes took %v, want under %v", len(md), took, perInput)
		}
		if err != nil {
			var se *stage.Error
			if !errors.As(err, &se) || se.Code == stage.CodeInternal || se.Code == stage.CodeTimeout {
				t.Fatalf("%d bytes (%s, %s, %s): %v", len(md), theme, size, numbering, err)
			}
			return
		}
		if resp.Pages < 1 || !bytes.HasPrefix(resp.PDF, []byte("%PDF-")) || !bytes.Contains(resp.PDF[max(0, len(resp.PDF)-64):], []byte("%%EOF")) {
			t.Fatalf("not a PDF: %d pages, %q...", resp.Pages, resp.PDF[:min(len(resp.PDF), 16)])
		}
		if !isFuzzing() && !checked[md] {
			checked[md] = true
			pdfinfo(t, resp.PDF, resp.Pages)
		}
	})
}

// isFuzzing reports whether the fuzzer is generating inputs; plain go test
// only replays the seeds and testdata/fuzz.
func isFuzzing() bool {
	for _, a := range os.Args {
		if strings.HasPrefix(a, "-test.fuzz=") && a != "-test.fuzz=" {
			return true
		}
	}
	return false
}

func pdfinfo(t *testing.T, pdf []byte, pages int) {
	t.Helper()
	bin, err := exec.LookPath("pdfinfo")
	if err != nil {
		t.Log("no pdfinfo (apt-get install poppler-utils): PDF structure unchecked")
		return
	}
	path := filepath.Join(t.TempDir(), "out.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(bin, path).CombinedOutput()
	if err != nil || bytes.Contains(out, []byte("Syntax Error")) {
		t.Fatalf("pdfinfo: %v\n%s", err, out)
	}
	if !bytes.Contains(out, fmt.Appendf(nil, "Pages:           %d\n", pages)) {
		t.Fatalf("pdfinfo disagrees on %d pages:\n%s", pages, out)
	}
}

// seeds are documents that reach every part of the layout: nesting, the
// inline-HTML subset, tables, footnotes, data: images good and bad, right
// to left and CJK text, HTML lists.
func seeds(tb testing.TB) []string {
	var imgs []string
	for _, b := range images(tb) {
		uri := "data:image/png;base64," + base64.StdEncoding.EncodeToString(b)
		imgs = append(imgs, "![alt]("+uri+")", `<img src="`+uri+`" width="50" height="9999999">`)
	}
	return append([]string{
		"# Title\n\nSome *emphasis*, **strong**, `code`, ~~gone~~, [link](https://example.com) and www.example.com.\n",
		strings.Repeat("> ", 40) + "deep quote\n",
		strings.Repeat("- ", 40) + "deep list\n",
		"1. one\n   - two\n     1. three\n        > four\n        > ```go\n        > code\n        > ```\n",
		"| a | b | c |\n|:--|:-:|--:|\n| 1 | **2** | `3` |\n| long long long long long long long long long long | x | y |\n",
		"| a |\n|---|\n" + strings.Repeat("| "+strings.Repeat("w", 300)+" |\n", 3),
		"Text[^1] and more[^n].\n\n[^1]: A note.\n[^n]: Another\n    with a second paragraph.\n",
		"- [ ] task\n- [x] done\n",
		"<b>bold</b> <i>it</i> <u>u</u> <s>s</s> <sub>2</sub> <sup>3</sup> <small>s</small> <kbd>k</kbd> <q>quote <q>in</q></q> <span style=\"color:#f00\">red</span> <font color=\"blue\">b</font><br>",
		"<div align=\"center\">centred <b>text</b><p align=\"right\">right</p></div>\n\n<center>c</center>\n",
		"<ol start=\"-3\" type=\"i\" reversed><li>a<li value=\"7\">b<li>c</ol>\n\n<ol type=\"A\" start=\"0\"><li>x</ol>\n\n<ul><li>u<ul><li>v</ul></ul>\n",
		"<ol start=\"99999999999999999999\" type=\"a\"><li>big</ol>\n",
		"<details><summary>More</summary>\n\nhidden *text*\n\n</details>\n",
		"<table><tr><td>html</td><td>table</td></tr></table>\n",
		"<pre>\npre  text\n</pre>\n\n<blockquote>bq <b>x</b></blockquote>\n<h2>h</h2>\n<hr>\n",
		"<style>body { color: red }</style>\n\n<script>alert(1)</script>\n\n<!-- comment -->\n",
		"שלום עולם, hello, مرحبا بالعالم 123.\n\n<p dir=\"rtl\">עברית <b>bold</b> English</p>\n\n| ع | ب |\n|---|---|\n| سلام | עברית |\n",
		"中文文本，日本語のテキスト、한국어 텍스트。" + strings.Repeat("漢字", 200) + "\n",
		"Emoji 😀👍🏽 and combining e\u0301 and ZWJ 👨\u200d👩\u200d👧 and \u202eoverride\u202c and \ufffd.\n",
		"```\n" + strings.Repeat("a very long code line without breaks ", 40) + "\n```\n",
		strings.Repeat("w", 5000) + "\n",
		"Setext\n===\n\n# ATX #\n###### six\n\n---\n***\n",
		"<img src=\"data:image/png;base64,!!!!\" alt=\"bad\"> <img src=\"data:,\"> <img src=\"data:image/gif;base64,R0lGODlh\"> <img width=\"-5\" height=\"0\" src=\"x.png\">\n",
		"<a href=\"#x\">to x</a> <a name=\"x\"></a> [self](#title) <a href=\"javascript:alert(1)\">js</a>\n",
	}, imgs...)
}

// images are small images, whole and damaged: truncated, lying headers,
// huge declared sizes, zero sizes.
func images(tb testing.TB) [][]byte {
	pic := image.NewPaletted(image.Rect(0, 0, 8, 4), color.Palette{color.White, color.Black})
	var p, j, g bytes.Buffer
	if err := png.Encode(&p, pic); err != nil {
		tb.Fatal(err)
	}
	if err := jpeg.Encode(&j, pic, nil); err != nil {
		tb.Fatal(err)
	}
	if err := gif.Encode(&g, pic, nil); err != nil {
		tb.Fatal(err)
	}
	ihdr := func(w, h uint32) []byte { // a PNG whose header claims w x h
		b := bytes.Clone(p.Bytes())
		binary.BigEndian.PutUint32(b[16:], w)
		binary.BigEndian.PutUint32(b[20:], h)
		binary.BigEndian.PutUint32(b[29:], crc32.ChecksumIEEE(b[12:29]))
		return b
	}
	gifSize := func(w, h uint16) []byte {
		b := bytes.Clone(g.Bytes())
		binary.LittleEndian.PutUint16(b[6:], w)
		binary.LittleEndian.PutUint16(b[8:], h)
		return b
	}
	jpegSize := func(w, h uint16) []byte { // rewrite the SOF0 frame size
		b := bytes.Clone(j.Bytes())
		if i := bytes.Index(b, []byte{0xff, 0xc0}); i >= 0 {
			binary.BigEndian.PutUint16(b[i+5:], h)
			binary.BigEndian.PutUint16(b[i+7:], w)
		}
		return b
	}
	return [][]byte{
		p.Bytes(), j.Bytes(), g.Bytes(),
		p.Bytes()[:40], j.Bytes()[:30], g.Bytes()[:14],
		ihdr(0, 0), ihdr(1, 100000), ihdr(65535, 65535), ihdr(0x7fffffff, 1),
		gifSize(0, 0), gifSize(65535, 65535),
		jpegSize(0, 0), jpegSize(65535, 65535),
	}
}
