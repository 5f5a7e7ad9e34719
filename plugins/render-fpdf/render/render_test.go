package render

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/png"
	"math"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/sdk/plugintest"
	"github.com/mdpress/mdpress/sdk/stage"
)

func TestConformance(t *testing.T) {
	t.Run("lifecycle", func(t *testing.T) { plugintest.Lifecycle(t, New(nil)) })
	t.Run("in process", func(t *testing.T) {
		plugintest.Renderer(t, New(nil), plugintest.Config{JSON: `{"compress": true}`}, "")
	})

	// The binary the host launches, over real go-plugin gRPC: the document
	// tree must survive the trip and render as it does in process.
	t.Run("binary", func(t *testing.T) {
		if testing.Short() {
			t.Skip("builds the plugin binary; skipped in -short mode")
		}
		bin := plugintest.Build(t, "github.com/mdpress/mdpress/plugins/render-fpdf")
		c := plugintest.Launch(t, bin, stage.NameRender, plugintest.Config{JSON: `{"maxPages": 500}`})
		plugintest.Renderer(t, c, plugintest.Config{Configured: true}, "")

		needTool(t, "pdftotext")
		q := &stage.RenderRequest{Document: readMarkdown(t, "gfm.md"), Tokens: basicTokens, Page: a4(t),
			Numbering: stage.NumberingRight, Watermark: "SAMPLE"}
		remote, err := c.Render(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		local, err := newRenderer(t, `{}`).Render(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		if a, b := pdfText(t, remote.PDF), pdfText(t, local.PDF); a != b || remote.Pages != local.Pages {
			t.Errorf("over gRPC: %d pages, text\n%s\nin process: %d pages, text\n%s", remote.Pages, a, local.Pages, b)
		}
	})
}

func TestConfig(t *testing.T) {
	for _, tc := range []struct {
		name, json string
		wantErr    string // substring of the error; "" means valid
		want       Config
	}{
		{"empty", ``, "", Config{Compress: true, MaxPages: 10000}},
		{"null", `null`, "", Config{Compress: true, MaxPages: 10000}},
		{"defaults", `{}`, "", Config{Compress: true, MaxPages: 10000}},
		{"set", `{"compress": false, "maxPages": 5}`, "", Config{Compress: false, MaxPages: 5}},
		{"unknown key", `{"compres": true}`, `unknown key "compres"`, Config{}},
		{"wrong type", `{"compress": "yes"}`, "compress must be a bool", Config{}},
		{"zero limit is the default", `{"maxPages": 0}`, "", Config{Compress: true, MaxPages: 10000}},
		{"bad limit", `{"maxPages": -1}`, "maxPages must not be negative", Config{}},
		{"trailing", `{} {}`, "trailing data", Config{}},
		{"not an object", `[1]`, "not a JSON object", Config{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := New(nil, WithFonts(mustFonts(t)))
			_, err := r.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(tc.json)})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(stage.SafeMessage(err), tc.wantErr) || stage.CodeOf(err) != stage.CodeInvalid {
					t.Fatalf("Configure(%s) = %v, want invalid error containing %q", tc.json, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.cfg != tc.want {
				t.Errorf("config %+v, want %+v", r.cfg, tc.want)
			}
		})
	}
}

func mustFonts(t testing.TB) *fonts.Set {
	s, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestLifecycle(t *testing.T) {
	r := New(nil) // parses fonts itself, in Configure
	if err := r.Health(context.Background()); err == nil {
		t.Error("Health before Configure must report the fonts missing")
	}
	if err := r.Close(); err != nil { // safe before Configure
		t.Fatal(err)
	}
	resp, err := r.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(`{}`)})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Info.Name != "render-fpdf" || !slices.Equal(resp.Info.Capabilities, []string{stage.CapReadsTree, stage.CapReadsTreeParts}) {
		t.Errorf("info %+v: want only the reads-tree and reads-tree-parts capabilities (no CSS)", resp.Info)
	}
	if err := r.Health(context.Background()); err != nil {
		t.Errorf("Health after Configure: %v", err)
	}
	if err := errors.Join(r.Close(), r.Close()); err != nil {
		t.Fatal(err)
	}
	_, err = r.Render(context.Background(), &stage.RenderRequest{Document: doc(para(txt("x"))), Page: a4(t)})
	if stage.CodeOf(err) != stage.CodeUnavailable {
		t.Errorf("Render after Close: %v, want unavailable", err)
	}
}

func TestRequestValidation(t *testing.T) {
	r := newRenderer(t, `{}`)
	for name, q := range map[string]*stage.RenderRequest{
		"nil":           nil,
		"zero page":     {Document: doc(para(txt("x")))},
		"huge page":     {Document: doc(para(txt("x"))), Page: stage.PageSize{Name: "X", WidthPt: 1e6, HeightPt: 100}},
		"nan page":      {Document: doc(para(txt("x"))), Page: stage.PageSize{Name: "X", WidthPt: math.NaN(), HeightPt: 100}},
		"bad numbering": {Document: doc(para(txt("x"))), Page: a4(t), Numbering: "top"},
	} {
		if _, err := r.Render(context.Background(), q); stage.CodeOf(err) != stage.CodeInvalid {
			t.Errorf("%s: %v, want invalid", name, err)
		}
	}
}

// TestPageSizes checks the MediaBox of every size in the table.
func TestPageSizes(t *testing.T) {
	needTool(t, "pdfinfo")
	r := newRenderer(t, `{}`)
	d := markdownDoc(t, "# Size\n\nSome text on the page, long enough to wrap on the smallest sizes of all.")
	re := regexp.MustCompile(`([\d.]+) x ([\d.]+) pts`)
	for _, p := range papers.All() {
		t.Run(p.Name, func(t *testing.T) {
			t.Parallel()
			resp := renderPDF(t, r, req{doc: d, tokens: modernTokens, page: p.Name})
			m := re.FindStringSubmatch(pdfInfo(t, resp.PDF)["Page size"])
			if m == nil {
				t.Fatalf("no page size in pdfinfo output")
			}
			w, _ := strconv.ParseFloat(m[1], 64)
			h, _ := strconv.ParseFloat(m[2], 64)
			if math.Abs(w-p.WidthPt) > 1 || math.Abs(h-p.HeightPt) > 1 {
				t.Errorf("page %.2fx%.2f, want %.2fx%.2f", w, h, p.WidthPt, p.HeightPt)
			}
		})
	}
}

// manyPages is a document of n sections of about one page each.
func manyPages(t testing.TB, n int) stage.Document {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, "## Section %d\n\n", i+1)
		for range 16 {
			b.WriteString("The quick brown fox jumps over the lazy dog, then naps in the sun for a while. ")
			b.WriteString("Pack my box with five dozen liquor jugs and carry it up the hill.\n\n")
		}
	}
	return markdownDoc(t, b.String())
}

func TestNumbering(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	d := manyPages(t, 3)
	for _, n := range []stage.Numbering{stage.NumberingLeft, stage.NumberingCenter, stage.NumberingRight, stage.NumberingNone} {
		t.Run(string(n), func(t *testing.T) {
			t.Parallel()
			resp := renderPDF(t, r, req{doc: d, tokens: modernTokens, numbering: n})
			pages := pdfBoxes(t, resp.PDF)
			if len(pages) < 3 {
				t.Fatalf("%d pages, want at least 3", len(pages))
			}
			for i, p := range pages {
				var found []bboxWord
				for _, w := range p.Words {
					if w.Y0 > p.H-modernTokens.Margins[2] {
						found = append(found, w)
					}
				}
				if n == stage.NumberingNone {
					if len(found) != 0 {
						t.Errorf("page %d: %v in the bottom margin, want nothing", i+1, found)
					}
					continue
				}
				if len(found) != 1 || found[0].Text != strconv.Itoa(i+1) {
					t.Fatalf("page %d: bottom margin holds %v, want the number %d", i+1, found, i+1)
				}
				mid := (found[0].X0 + found[0].X1) / 2
				third := int(mid / (p.W / 3))
				want := map[stage.Numbering]int{stage.NumberingLeft: 0, stage.NumberingCenter: 1, stage.NumberingRight: 2}[n]
				if third != want {
					t.Errorf("page %d: number centred at x=%.1f (third %d), want third %d", i+1, mid, third, want)
				}
				if n == stage.NumberingCenter && math.Abs(mid-p.W/2) > 1 {
					t.Errorf("page %d: centred number at %.1f, page middle %.1f", i+1, mid, p.W/2)
				}
			}
		})
	}
}

func TestWatermark(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	resp := renderPDF(t, r, req{doc: manyPages(t, 3), tokens: basicTokens, watermark: "FREE PLAN"})
	pages := pageTexts(t, resp.PDF)
	if len(pages) != resp.Pages || len(pages) < 3 {
		t.Fatalf("%d pages of text for %d pages", len(pages), resp.Pages)
	}
	for i, p := range pages {
		// Rotated text comes out a letter per line.
		if !strings.Contains(strings.Join(strings.Fields(p), ""), "FREEPLAN") {
			t.Errorf("page %d has no watermark: %q", i+1, p)
		}
	}
	plain := renderPDF(t, r, req{doc: manyPages(t, 3), tokens: basicTokens})
	if strings.Contains(strings.Join(strings.Fields(pdfText(t, plain.PDF)), ""), "FREEPLAN") {
		t.Error("a document without a watermark shows one")
	}

	// Readers see it: light grey pixels across the middle of a page that
	// holds a single line of text, and none without the watermark.
	one := doc(para(txt("Only line.")))
	grey := func(pdf []byte) int {
		w, h, px := rasterGray(t, pdf, 30)
		n := 0
		for y := h / 3; y < 2*h/3; y++ {
			for x := w / 4; x < 3*w/4; x++ {
				if v := px[y*w+x]; v > 120 && v < 245 {
					n++
				}
			}
		}
		return n
	}
	with := grey(renderPDF(t, r, req{doc: one, tokens: modernTokens, watermark: "DRAFT"}).PDF)
	without := grey(renderPDF(t, r, req{doc: one, tokens: modernTokens}).PDF)
	if with < 200 || without != 0 {
		t.Errorf("grey pixels in the middle: %d with the watermark, %d without", with, without)
	}
}

// TestWatermarkOverItsOwnGrey: an image in the watermark's own grey, laid
// across the page, does not hide it: the white outline under the letters
// shows where the letters do not.
func TestWatermarkOverItsOwnGrey(t *testing.T) {
	needTool(t, "pdftoppm")
	grey := image.NewGray(image.Rect(0, 0, 600, 800))
	for i := range grey.Pix {
		grey.Pix[i] = 150
	}
	var b bytes.Buffer
	if err := png.Encode(&b, grey); err != nil {
		t.Fatal(err)
	}
	d := markdownDoc(t, "![grey](data:image/png;base64,"+base64.StdEncoding.EncodeToString(b.Bytes())+")\n")
	r := newRenderer(t, `{}`)
	// marked counts the pixels in the middle of the page, inside the
	// image, that are not the image's grey.
	marked := func(pdf []byte) int {
		w, h, px := rasterGray(t, pdf, 30)
		n := 0
		for y := 3 * h / 10; y < 7*h/10; y++ {
			for x := 3 * w / 10; x < 7*w/10; x++ {
				if v := int(px[y*w+x]); v < 142 || v > 158 {
					n++
				}
			}
		}
		return n
	}
	with := marked(renderPDF(t, r, req{doc: d, tokens: modernTokens, watermark: "FREE PLAN"}).PDF)
	without := marked(renderPDF(t, r, req{doc: d, tokens: modernTokens}).PDF)
	if without != 0 || with < 100 {
		t.Errorf("pixels off the image's grey in the middle: %d with the watermark, %d without", with, without)
	}
}

func TestOutlineAndTitle(t *testing.T) {
	needTool(t, "qpdf")
	r := newRenderer(t, `{}`)
	d := markdownDoc(t, "# Заголовок α 𝄞\n\ntext\n\n## Second\n\ntext\n\n#### Deep\n\ntext\n\n## Third\n\ntext\n")
	resp := renderPDF(t, r, req{doc: d, tokens: modernTokens})
	if got := pdfInfo(t, resp.PDF)["Title"]; got != "Заголовок α 𝄞" {
		t.Errorf("Title %q", got)
	}
	var out struct {
		Outlines []outline `json:"outlines"`
	}
	if err := json.Unmarshal([]byte(runFile(t, resp.PDF, "qpdf", "--json", "--json-key=outlines")), &out); err != nil {
		t.Fatal(err)
	}
	got := flatten(out.Outlines, 0)
	want := []string{"0 Заголовок α 𝄞", "1 Second", "2 Deep", "1 Third"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("outline %q, want %q", got, want)
	}
}

type outline struct {
	Title string    `json:"title"`
	Kids  []outline `json:"kids"`
}

func flatten(os []outline, depth int) []string {
	var out []string
	for _, o := range os {
		out = append(out, strconv.Itoa(depth)+" "+o.Title)
		out = append(out, flatten(o.Kids, depth+1)...)
	}
	return out
}

func TestImages(t *testing.T) {
	needTool(t, "pdfimages")
	r := newRenderer(t, `{}`)
	for _, tc := range []struct {
		name, md string
		images   int    // images in the PDF
		size     string // "WxH" of the first, per pdfimages
		text     string // text that must show
	}{
		{"png", "![dot](data:image/png;base64," + pngB64 + ")", 1, "40 20", ""},
		{"jpeg", "![photo](data:image/jpeg;base64," + jpegB64(t) + ")", 1, "16 8", ""},
		// fpdf stores a GIF as an indexed image whose palette is its own
		// stream, which deflateContents rewrites.
		{"gif", "![anim](data:image/gif;base64," + gifB64(t) + ")", 1, "12 6", ""},
		{"remote", "![Remote diagram](https://example.com/x.png)", 0, "", "Remote diagram"},
		{"file", "![Local file](file:///etc/passwd)", 0, "", "Local file"},
		{"broken data", "![Broken data](data:image/png;base64,AAAA)", 0, "", "Broken data"},
		{"html img", `<img src="data:image/png;base64,` + pngB64 + `" alt="x">`, 1, "40 20", ""},
		{"reused", "![a](data:image/png;base64," + pngB64 + ") ![b](data:image/png;base64," + pngB64 + ")", 2, "40 20", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: markdownDoc(t, "Before\n\n"+tc.md+"\n\nAfter"), tokens: modernTokens})
			list := strings.Split(strings.TrimSpace(run(t, resp.PDF, "pdfimages", "-list", "-")), "\n")[2:]
			if len(list) != tc.images {
				t.Fatalf("%d images drawn, want %d:\n%s", len(list), tc.images, strings.Join(list, "\n"))
			}
			if tc.images > 0 && !strings.Contains(strings.Join(strings.Fields(list[0]), " "), " "+tc.size+" ") {
				t.Errorf("image %q, want size %s", list[0], tc.size)
			}
			if text := pdfText(t, resp.PDF); !strings.Contains(text, tc.text) || !strings.Contains(text, "After") {
				t.Errorf("text %q lacks %q", text, tc.text)
			}
			if tc.images == 0 {
				return
			}
			needTool(t, "qpdf")
			runFile(t, resp.PDF, "qpdf", "--check")
			// The image's own colours, as a reader draws them: each test
			// image has two, one a half.
			want := map[string][]color.RGBA{
				"png":  {{200, 30, 30, 255}, {30, 160, 60, 255}},
				"jpeg": {{0, 90, 200, 255}},
				"gif":  {{0, 90, 200, 255}},
			}
			w, h, px := rasterRGB(t, resp.PDF, 144)
			for _, c := range want[tc.name] {
				n := 0
				for i := 0; i+2 < len(px); i += 3 {
					if near(color.RGBA{px[i], px[i+1], px[i+2], 255}, c) {
						n++
					}
				}
				// The smallest half (6x6 px at 96 dpi) covers 81 pixels
				// at 144 dpi.
				if n < 60 {
					t.Errorf("%d pixels of %v on the %dx%d page, want the image's half", n, c, w, h)
				}
			}
		})
	}
}

// near says whether two colours differ by at most a JPEG's error or a
// rasterizer's smoothing.
func near(a, b color.RGBA) bool {
	d := func(x, y uint8) bool { return max(x, y)-min(x, y) <= 40 }
	return d(a.R, b.R) && d(a.G, b.G) && d(a.B, b.B)
}

func TestUnicode(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	src := "Ελληνικά κείμενο, Кириллица текст, arrows ← → ⇒, box ┌─┐└─┘, math ∑ ≤ ∞, emoji 😀 and 漢字."
	// The emoji is drawn from the system's colour emoji font when there is
	// one (TestEmojiDrawnAsImages), else as U+FFFD like the ideographs,
	// for which newRenderer configures no fallback font.
	smile := "\uFFFD"
	if _, err := os.Stat(SystemEmoji); err == nil {
		smile = "😀"
	}
	for _, th := range themes {
		resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: th.tokens})
		text := strings.Join(strings.Fields(pdfText(t, resp.PDF)), " ")
		for _, want := range []string{"Ελληνικά κείμενο", "Кириллица текст", "← → ⇒", "┌─┐└─┘", "∑ ≤ ∞", "emoji " + smile + " and \uFFFD\uFFFD."} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: %q missing from %q", th.name, want, text)
			}
		}
	}
}

func TestTableHeaderRepeats(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	var b strings.Builder
	b.WriteString("| Ident | Description | Amount |\n|---|---|--:|\n")
	for i := range 120 {
		fmt.Fprintf(&b, "| row%d | a cell with some words in it | %d.00 |\n", i, i*7)
	}
	resp := renderPDF(t, r, req{doc: markdownDoc(t, b.String()), tokens: modernTokens})
	pages := pageTexts(t, resp.PDF)
	if len(pages) < 3 {
		t.Fatalf("%d pages, want the table to span at least 3", len(pages))
	}
	seen := map[string]bool{}
	for i, p := range pages {
		lines := strings.Split(strings.TrimSpace(p), "\n")
		if !strings.HasPrefix(lines[0], "Ident") {
			t.Errorf("page %d starts with %q, want the header row", i+1, lines[0])
		}
		for _, f := range strings.Fields(p) {
			seen[f] = true
		}
	}
	for i := range 120 {
		if !seen["row"+strconv.Itoa(i)] {
			t.Errorf("row%d missing", i)
		}
	}
}

// TestTableWordsWholeBesideLongURL: a table too narrow for one column's
// long URL still keeps the short words of the other columns whole; only
// the URL breaks.
func TestTableWordsWholeBesideLongURL(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	url := "https://example.com/a/very/long/path/" + strings.Repeat("segment-", 14) + "end?query=value"
	src := "| Package | Description | Link |\n|---|---|---|\n" +
		"| goldmark | Markdown parser written in Go, extensible and compliant | " + url + " |\n" +
		"| fpdf | PDF generation library | https://example.com/fpdf |\n"
	resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: modernTokens})
	seen := map[string]bool{}
	for _, p := range pdfBoxes(t, resp.PDF) {
		for _, w := range p.Words {
			seen[strings.Trim(w.Text, ",")] = true
		}
	}
	for _, w := range strings.Fields("Package Description Link goldmark Markdown parser written extensible compliant fpdf generation library") {
		if !seen[w] {
			t.Errorf("%q is not a whole word in the PDF", w)
		}
	}
}

func TestLongCodeLine(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	long := strings.Repeat("0123456789abcdefghij", 40) // 800 characters, no spaces
	for _, page := range []string{"A4", "A9"} {
		resp := renderPDF(t, r, req{doc: markdownDoc(t, "```\n"+long+"\n```\n"), tokens: basicTokens, page: page})
		joined := strings.Join(strings.Fields(bodyText(t, resp.PDF)), "")
		if !strings.Contains(joined, long) {
			t.Errorf("%s: the long line is not fully present: %q", page, joined)
		}
		checkInsideMargins(t, pdfBoxes(t, resp.PDF), scaledMargins(basicTokens.Margins, page), 1)
	}
}

// TestHTMLPreKeepsLines: a raw HTML <pre> block is preformatted text; its
// lines and indentation are what it says (a diagram, a command's output),
// so each line must reach the reader on its own line, indented as written,
// in the code font, as a browser shows it.
func TestHTMLPreKeepsLines(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	src := "Before.\n\n<pre>\nalpha one\n    beta two\n        gamma &lt;three&gt;\n</pre>\n\nAfter.\n"
	resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: modernTokens})
	at := map[string]bboxWord{}
	for _, w := range pdfBoxes(t, resp.PDF)[0].Words {
		at[w.Text] = w
	}
	alpha, beta, gamma, three := at["alpha"], at["beta"], at["gamma"], at["<three>"]
	if alpha.Text == "" || beta.Text == "" || gamma.Text == "" || three.Text == "" {
		t.Fatalf("words of the <pre> missing: %+v", at)
	}
	if !(alpha.Y1 < beta.Y0 && beta.Y1 < gamma.Y0) {
		t.Errorf("the <pre> lines are not one under the other: alpha %.1f-%.1f, beta %.1f-%.1f, gamma %.1f-%.1f",
			alpha.Y0, alpha.Y1, beta.Y0, beta.Y1, gamma.Y0, gamma.Y1)
	}
	// Monospace: four leading spaces are as wide as "beta", which is four
	// characters too.
	char := (beta.X1 - beta.X0) / 4
	if d := beta.X0 - alpha.X0; math.Abs(d-4*char) > 1 {
		t.Errorf("beta is indented %.1f pt from alpha, want 4 characters (%.1f pt)", d, 4*char)
	}
	if d := gamma.X0 - alpha.X0; math.Abs(d-8*char) > 1 {
		t.Errorf("gamma is indented %.1f pt from alpha, want 8 characters (%.1f pt)", d, 8*char)
	}
}

// TestCodeWrapsAtSpaces: a code line too long for its column wraps at its
// spaces, as white-space: pre-wrap wraps it on Chromium, not in the middle
// of an identifier; its indentation stays with its first word, and the
// line it wraps onto starts at the block's left edge, as on Chromium.
func TestCodeWrapsAtSpaces(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	const word = "identifier_name"
	src := "```\nplain\n    " + strings.TrimSpace(strings.Repeat(word+" ", 12)) + "\n```\n"
	resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: modernTokens})
	pages := pdfBoxes(t, resp.PDF)
	checkInsideMargins(t, pages, modernTokens.Margins, 1)
	var plain bboxWord
	var ids []bboxWord
	for _, w := range pages[0].Words {
		switch {
		case w.Text == "plain":
			plain = w
		case w.Text == word:
			ids = append(ids, w)
		case w.Text != "1":
			t.Errorf("word %q: the code line was cut between characters", w.Text)
		}
	}
	if plain.Text == "" || len(ids) != 12 {
		t.Fatalf("%d whole %q of 12, plain %v", len(ids), word, plain.Text != "")
	}
	char := (plain.X1 - plain.X0) / 5
	if d := ids[0].X0 - plain.X0; math.Abs(d-4*char) > 1 {
		t.Errorf("the first word is indented %.1f pt, want its 4 spaces (%.1f pt)", d, 4*char)
	}
	wrapped := 0
	for i := 1; i < len(ids); i++ {
		if ids[i].Y0 > ids[i-1].Y1 {
			wrapped++
			if math.Abs(ids[i].X0-plain.X0) > 1 {
				t.Errorf("the wrapped line starts at %.1f pt, want the block's left edge, %.1f pt", ids[i].X0, plain.X0)
			}
		}
	}
	if wrapped == 0 {
		t.Error("the code line did not wrap; the test exercises nothing")
	}
}

// scaledMargins mirrors the layout's cap of margins at a sixth of the page.
func scaledMargins(m [4]float64, page string) [4]float64 {
	p, _ := papers.Lookup(page)
	for i := range m {
		side := p.HeightPt
		if i%2 == 1 {
			side = p.WidthPt
		}
		m[i] = math.Min(m[i], side/6)
	}
	return m
}

// TestHeadingNeverLastOnPage sweeps the text before a heading so that, in
// some variants, it would land at the foot of a page, and checks with the
// reader's word boxes that text always follows it on its page.
func TestHeadingNeverLastOnPage(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	moved := 0
	for lines := 30; lines < 50; lines++ {
		var b strings.Builder
		for i := range lines {
			fmt.Fprintf(&b, "Line %d of filler.\n\n", i)
		}
		b.WriteString("## Keepwithnext heading\n\nFirst paragraph after the heading, long enough to be a real line of text.\n")
		resp := renderPDF(t, r, req{doc: markdownDoc(t, b.String()), tokens: modernTokens})
		for pi, p := range pdfBoxes(t, resp.PDF) {
			for _, w := range p.Words {
				if w.Text != "Keepwithnext" {
					continue
				}
				below := false
				for _, o := range p.Words {
					if o.Text == "paragraph" && o.Y0 > w.Y1 {
						below = true
					}
				}
				if !below {
					t.Errorf("%d filler lines: heading is the last thing on page %d", lines, pi+1)
				}
				if pi > 0 {
					moved++
				}
			}
		}
	}
	if moved == 0 {
		t.Error("no variant put the heading on a later page; the sweep does not exercise the rule")
	}
}

// TestHeadingRunNeverLastOnPage: a heading keeps with what follows it when
// that starts with another heading (which keeps with its own text in
// turn), a rule, a quote or list opening with a heading, or an image or a
// table in an HTML block. The code filler sweeps the run across the foot of page 1.
func TestHeadingRunNeverLastOnPage(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	img := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngOf(t, 10, 300))
	const body = "Body text that follows the headings, long enough to fill a line or two of the page."
	follow := map[string]string{
		"h1 then h2":          "# Runfirst\n\n## Runsecond\n\n" + body,
		"h6 then h1":          "###### Runfirst\n\n# Runsecond\n\n" + body,
		"three h2":            "## Runfirst\n\n## Runsecond\n\n## Runthird\n\n" + body,
		"rule":                "## Runfirst\n\n---\n\n" + body,
		"quote with heading":  "## Runfirst\n\n> # Runsecond\n>\n> " + body,
		"list with heading":   "## Runfirst\n\n- ## Runsecond\n\n  " + body,
		"image in html block": "## Runfirst\n\n<img src=\"" + img + "\">\n",
		"html table":          "## Runfirst\n\n<table><tr><th>Head</th></tr><tr><td>" + body + "</td></tr></table>\n",
		"html table in a div": "## Runfirst\n\n<div align=\"center\">\n<table><tr><td>" + body + "</td></tr><tr><td>Next</td></tr></table>\n</div>\n",
	}
	for name, md := range follow {
		t.Run(name, func(t *testing.T) {
			if sweepHeadingRun(t, r, modernTokens, md) == 0 {
				t.Error("no variant put the headings on page 2; the sweep does not exercise the rule")
			}
		})
	}
}

// sweepHeadingRun renders md, which opens with headings whose words begin
// with "Run", after 30 to 55 lines of code, so that they cross the foot of
// page 1, and fails t for each page that ends with such a heading. It
// returns how many variants put the first heading, "Runfirst", after page
// 1, which a sweep must do to exercise the rule.
func sweepHeadingRun(t *testing.T, r *Renderer, tk stage.Tokens, md string) (moved int) {
	t.Helper()
	for lines := 30; lines < 56; lines++ {
		src := "```\n" + strings.Repeat("filler\n", lines) + "```\n\n" + md + "\n"
		resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: tk, numbering: stage.NumberingNone})
		pages := pdfBoxes(t, resp.PDF)
		for pi, p := range pages[:len(pages)-1] {
			if len(p.Words) == 0 {
				continue
			}
			last := p.Words[0]
			for _, w := range p.Words {
				if w.Y1 > last.Y1 {
					last = w
				}
			}
			for _, w := range p.Words {
				if w.Y1 > last.Y0 && strings.HasPrefix(w.Text, "Run") {
					t.Errorf("%d filler lines: page %d ends with heading %q", lines, pi+1, w.Text)
				}
			}
		}
		if !slices.ContainsFunc(pages[0].Words, func(w bboxWord) bool { return w.Text == "Runfirst" }) {
			moved++
		}
	}
	return moved
}

// TestHeadingKeepsWithAlertAndFormula: a heading keeps with what follows
// it when that is one of GitHub's alerts, whose title keeps with its body,
// or a display formula taller than two lines of text (a matrix), which
// moves to the next page whole. The code filler sweeps the heading across
// the foot of page 1; the word after it must be on its page.
func TestHeadingKeepsWithAlertAndFormula(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	const matrix = `<math display="block"><mrow><mo fence="true" strechy="true">(</mo><mtable columnalign="center" rowalign="center">` +
		`<mtr><mtd><mi>a</mi></mtd></mtr><mtr><mtd><mi>b</mi></mtd></mtr><mtr><mtd><mi>c</mi></mtd></mtr>` +
		`<mtr><mtd><mi>d</mi></mtd></mtr><mtr><mtd><mi>e</mi></mtd></mtr><mtr><mtd><mi>f</mi></mtd></mtr>` +
		`</mtable><mo fence="true" strechy="true">)</mo></mrow></math>`
	const tex = `\begin{pmatrix} a \\ b \\ c \\ d \\ e \\ f \end{pmatrix}`
	follow := map[string]struct {
		add  func(d stage.Document)
		next string // how the first word drawn after the heading starts
	}{
		"alert": {func(d stage.Document) {
			title := &stage.Node{Kind: stage.KindParagraph, Attrs: map[string]string{"alert_title": "true"}, Children: []*stage.Node{txt("Note")}}
			d.Root.Children = append(d.Root.Children, &stage.Node{Kind: stage.KindBlockquote, Attrs: map[string]string{"alert": "note"},
				Children: []*stage.Node{title, para(txt("The body of the alert."))}})
		}, "Note"},
		"math block": {func(d stage.Document) {
			d.Root.Children = append(d.Root.Children, displayMath(tex, matrix))
		}, `\begin{pmatrix}`},
		"math in a paragraph": {func(d stage.Document) {
			m := inlineMath(tex, matrix)
			m.Attrs["math"] = "display"
			d.Root.Children = append(d.Root.Children, para(m, txt(" and text after it.")))
		}, `\begin{pmatrix}`},
	}
	for name, f := range follow {
		t.Run(name, func(t *testing.T) {
			moved := 0
			for lines := 30; lines < 56; lines++ {
				d := markdownDoc(t, "```\n"+strings.Repeat("filler\n", lines)+"```\n\n## Runfirst\n")
				f.add(d)
				resp := renderPDF(t, r, req{doc: d, tokens: modernTokens, numbering: stage.NumberingNone})
				heading, next := -1, -1
				for pi, p := range pdfBoxes(t, resp.PDF) {
					for _, w := range p.Words {
						switch {
						case w.Text == "Runfirst":
							heading = pi
						case strings.HasPrefix(w.Text, f.next) && next < 0:
							next = pi
						}
					}
				}
				if heading < 0 || next < 0 {
					t.Fatalf("%d filler lines: heading on page %d, %q on page %d", lines, heading+1, f.next, next+1)
				}
				if heading != next {
					t.Errorf("%d filler lines: the heading ends page %d, %q starts page %d", lines, heading+1, f.next, next+1)
				}
				if heading > 0 {
					moved++
				}
			}
			if moved == 0 {
				t.Error("no variant put the heading on page 2; the sweep does not exercise the rule")
			}
		})
	}
}

func TestLinks(t *testing.T) {
	r := newRenderer(t, `{"compress": false}`)
	d := markdownDoc(t, "# Top\n\n[web](https://example.com/a) [mail](mailto:a@example.com) [up](#top) [note][^1] [rel](docs/x.md) [js](javascript:alert(1))\n\n[^1]: The note.\n")
	resp := renderPDF(t, r, req{doc: d, tokens: modernTokens})
	pdf := string(resp.PDF)
	for _, want := range []string{"/URI (https://example.com/a)", "/URI (mailto:a@example.com)"} {
		if !strings.Contains(pdf, want) {
			t.Errorf("missing link annotation %s", want)
		}
	}
	if n := strings.Count(pdf, "/Dest ["); n < 2 {
		t.Errorf("%d internal link annotations, want at least 2 (heading, footnote)", n)
	}
	for _, bad := range []string{"javascript:", "docs/x.md"} {
		if strings.Contains(pdf, bad) {
			t.Errorf("%s written into the PDF", bad)
		}
	}
}

func TestThemesDiffer(t *testing.T) {
	needTool(t, "pdffonts")
	r := newRenderer(t, `{}`)
	d := readMarkdown(t, "gfm.md")
	fontsOf := func(tok stage.Tokens) string {
		return run(t, renderPDF(t, r, req{doc: d, tokens: tok}).PDF, "pdffonts", "-")
	}
	modern, basic := fontsOf(modernTokens), fontsOf(basicTokens)
	if !strings.Contains(modern, "+DejaVuSans-Bold ") || strings.Contains(modern, "DejaVuSerif") {
		t.Errorf("modern fonts:\n%s", modern)
	}
	if !strings.Contains(basic, "+DejaVuSerif-Bold ") || !strings.Contains(basic, "+DejaVuSerif-Italic ") {
		t.Errorf("basic fonts:\n%s", basic)
	}
	for _, f := range []string{modern, basic} {
		lines := strings.Split(strings.TrimSpace(f), "\n")[2:]
		for _, l := range lines {
			// name, type, encoding, emb, sub: embedded subsets.
			if fs := strings.Fields(l); len(fs) < 5 || fs[3] != "yes" || fs[4] != "yes" {
				t.Errorf("font not embedded as a subset: %s", l)
			}
		}
		if !strings.Contains(f, "+DejaVuSansMono ") || len(lines) < 4 {
			t.Errorf("fonts:\n%s", f)
		}
	}
}

func TestMaxPages(t *testing.T) {
	r := newRenderer(t, `{"maxPages": 2}`)
	_, err := r.Render(context.Background(), &stage.RenderRequest{Document: manyPages(t, 4), Page: a4(t)})
	if stage.CodeOf(err) != stage.CodeTooLarge {
		t.Fatalf("err %v, want too large", err)
	}
}

func TestCompressOption(t *testing.T) {
	d := manyPages(t, 1)
	small := renderPDF(t, newRenderer(t, `{"compress": true}`), req{doc: d})
	large := renderPDF(t, newRenderer(t, `{"compress": false}`), req{doc: d})
	if len(small.PDF) >= len(large.PDF) || !bytes.Contains(large.PDF, []byte(" Tj ET")) {
		t.Errorf("compressed %d bytes, uncompressed %d", len(small.PDF), len(large.PDF))
	}
}

// TestHostileMarkdown renders input meant to break a layout engine: every
// one must come back as a valid PDF, never a panic or a hang.
func TestHostileMarkdown(t *testing.T) {
	needTool(t, "pdfinfo")
	r := newRenderer(t, `{}`)
	huge := "data:image/png;base64," + base64.StdEncoding.EncodeToString(
		[]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x7f\xff\xff\xff\x7f\xff\xff\xff\x08\x06\x00\x00\x00"))
	for name, src := range map[string]string{
		"deep quotes":   strings.Repeat(">", 2000) + " deep",
		"deep lists":    strings.Repeat("- ", 500) + "item",
		"deep emphasis": strings.Repeat("*a ", 3000) + strings.Repeat("*", 3000),
		"long word":     strings.Repeat("x", 200_000),
		"many columns":  "|" + strings.Repeat(" a |", 300) + "\n|" + strings.Repeat("---|", 300) + "\n|" + strings.Repeat(" b |", 300),
		"unclosed html": "<div><span style=\"color:\"><b><i>text <script>never</div> more",
		"bad entities":  "&#0; &#xD800; &bogus; &#99999999;",
		"huge image":    "![alt](" + huge + ")",
		"controls":      "a\x00b\x01c\u202ed\u2066e\uFFFFf",
		"empty":         "",
		"only html":     "<!-- nothing -->",
		"wide table":    "| " + strings.Repeat("word ", 2000) + " |\n|---|\n| x |",
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: modernTokens, watermark: "\x00\U0001F600"})
			if got := pdfInfo(t, resp.PDF)["Pages"]; got != strconv.Itoa(resp.Pages) || resp.Pages < 1 {
				t.Errorf("pdfinfo pages %s, response %d", got, resp.Pages)
			}
		})
	}
}

// TestReadmeListsEverySetting: the README's config example is where an
// operator finds a key and its default; it must show every key, at the
// default parseConfig applies.
func TestReadmeListsEverySetting(t *testing.T) {
	readme, err := os.ReadFile("../README.md")
	if err != nil {
		t.Skipf("README not beside the package: %v", err)
	}
	def, err := json.Marshal(defaults())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(def, &m); err != nil {
		t.Fatal(err)
	}
	for key, v := range m {
		line := fmt.Sprintf("    %s: %v ", key, v)
		if !strings.Contains(string(readme), "\n"+line) {
			t.Errorf("plugins/render-fpdf/README.md: no line %q in its config example", line)
		}
	}
}
