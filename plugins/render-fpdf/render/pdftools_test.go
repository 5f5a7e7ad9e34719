package render

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Helpers that read a PDF the way a reader would, through poppler-utils
// and qpdf. A test that needs a missing tool skips with the reason.

func needTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed (poppler-utils / qpdf)", name)
	}
}

func run(t testing.TB, pdf []byte, name string, args ...string) string {
	t.Helper()
	needTool(t, name)
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(pdf)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %v: %v: %s", name, args, err, stderr.String())
	}
	return string(out)
}

// runFile runs a tool that cannot read standard input on a temporary copy
// of the PDF, named last on its command line.
func runFile(t testing.TB, pdf []byte, name string, args ...string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	return run(t, nil, name, append(args, path)...)
}

// pdfText is pdftotext's output in content-stream order, all pages.
func pdfText(t testing.TB, pdf []byte, args ...string) string {
	return run(t, pdf, "pdftotext", append(append([]string{"-raw", "-enc", "UTF-8"}, args...), "-", "-")...)
}

// pageTexts splits pdftotext output at form feeds, one string per page.
func pageTexts(t testing.TB, pdf []byte) []string {
	pages := strings.Split(pdfText(t, pdf), "\f")
	return pages[:len(pages)-1]
}

// bodyText is the text of all pages without their page numbers, which
// would otherwise interrupt a word wrapped across a page break.
func bodyText(t testing.TB, pdf []byte) string {
	return stripPageNumbers(pageTexts(t, pdf))
}

// readingText is bodyText in pdftotext's reading order rather than the
// content stream's: right-to-left text is drawn in display order, and
// only the reading order puts its words back in the order written.
func readingText(t testing.TB, pdf []byte) string {
	pages := strings.Split(run(t, pdf, "pdftotext", "-enc", "UTF-8", "-", "-"), "\f")
	return stripPageNumbers(pages[:len(pages)-1])
}

func stripPageNumbers(pages []string) string {
	var b strings.Builder
	for i, page := range pages {
		page = strings.TrimRight(page, "\n")
		if cut, ok := strings.CutSuffix(page, "\n"+strconv.Itoa(i+1)); ok {
			page = cut
		}
		b.WriteString(page + "\n")
	}
	return b.String()
}

func pdfInfo(t testing.TB, pdf []byte, args ...string) map[string]string {
	out := run(t, pdf, "pdfinfo", append(args, "-")...)
	info := map[string]string{}
	for line := range strings.SplitSeq(out, "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			info[strings.TrimSpace(k)] = strings.TrimSpace(v)
		}
	}
	return info
}

type bboxWord struct {
	X0, Y0, X1, Y1 float64
	Text           string
}

type bboxPage struct {
	W, H  float64
	Words []bboxWord
}

// pdfBoxes returns every word with its box, page by page (pdftotext -bbox).
func pdfBoxes(t testing.TB, pdf []byte) []bboxPage {
	out := run(t, pdf, "pdftotext", "-bbox", "-enc", "UTF-8", "-", "-")
	// poppler writes a title's characters above U+FFFF (an emoji in the
	// first heading) as surrogates encoded one by one, which is no UTF-8.
	out = strings.ToValidUTF8(out, "\uFFFD")
	var doc struct {
		Pages []struct {
			W     float64 `xml:"width,attr"`
			H     float64 `xml:"height,attr"`
			Words []struct {
				X0   float64 `xml:"xMin,attr"`
				Y0   float64 `xml:"yMin,attr"`
				X1   float64 `xml:"xMax,attr"`
				Y1   float64 `xml:"yMax,attr"`
				Text string  `xml:",chardata"`
			} `xml:"word"`
		} `xml:"body>doc>page"`
	}
	dec := xml.NewDecoder(strings.NewReader(out))
	dec.Strict = false
	dec.Entity = xml.HTMLEntity
	if err := dec.Decode(&doc); err != nil {
		t.Fatalf("parse pdftotext -bbox: %v", err)
	}
	var pages []bboxPage
	for _, p := range doc.Pages {
		bp := bboxPage{W: p.W, H: p.H}
		for _, w := range p.Words {
			bp.Words = append(bp.Words, bboxWord{w.X0, w.Y0, w.X1, w.Y1, w.Text})
		}
		pages = append(pages, bp)
	}
	return pages
}

// drawable replaces the characters no embedded font has with spaces, as
// the renderer draws them as U+FFFD, and removes soft hyphens, which are
// drawn only where a line breaks.
func drawable(t testing.TB, s string) string {
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	sans := set.Face(fonts.Of(fonts.Sans, fonts.Regular))
	return strings.Map(func(r rune) rune {
		if r == '\u00ad' {
			return -1
		}
		if r > ' ' && !sans.Has(r) {
			return ' '
		}
		return r
	}, s)
}

// words normalizes text to lower-case runs of letters and digits.
func words(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
}

// expectedText is the text a reader should find, in reading order: what
// the tree holds, minus what is deliberately not drawn (data: image alt
// texts, <script> content) and with footnotes last.
func expectedText(root *stage.Node) string {
	var b, notes strings.Builder
	var walk func(n *stage.Node, out *strings.Builder)
	skip := false
	walk = func(n *stage.Node, out *strings.Builder) {
		switch n.Kind {
		case stage.KindText:
			if !skip {
				out.WriteString(n.Text)
			}
		case stage.KindCodeSpan:
			out.WriteString(n.Text)
		case stage.KindCodeBlock:
			out.WriteString("\n" + n.Text + "\n")
		case stage.KindSoftBreak, stage.KindHardBreak:
			out.WriteByte(' ')
		case stage.KindRawHTML:
			switch strings.ToLower(strings.TrimSpace(n.Text)) {
			case "<script>":
				skip = true
			case "</script>":
				skip = false
			}
		case stage.KindImage:
			if strings.HasPrefix(n.Attr("src"), "data:") {
				return
			}
		case stage.KindFootnoteRef:
			out.WriteString(n.Attr("index"))
		case stage.KindFootnotes:
			for _, c := range n.Children {
				walk(c, &notes)
			}
			return
		}
		for _, c := range n.Children {
			walk(c, out)
		}
		if n.Kind == stage.KindParagraph || n.Kind == stage.KindHeading || n.Kind == stage.KindTableCell {
			out.WriteByte('\n')
		}
	}
	walk(root, &b)
	return b.String() + "\n" + notes.String()
}

// checkWordsInOrder checks that every source word appears in the PDF text,
// in order. The PDF may hold more (list numbers, page numbers, footnote
// marks), and a word wrapped between characters may arrive in pieces.
func checkWordsInOrder(t *testing.T, source, pdf []string) {
	t.Helper()
	const window = 120
	at := 0
	for si, w := range source {
		found := false
		for j := at; j < len(pdf) && j < at+window && !found; j++ {
			acc := ""
			for k := j; k < len(pdf) && len(acc) < len(w); k++ {
				acc += pdf[k]
				if acc == w {
					at, found = k+1, true
					break
				}
				if !strings.HasPrefix(w, acc) {
					break
				}
			}
		}
		if !found {
			lo, hi := max(0, si-5), min(len(source), si+5)
			plo, phi := max(0, at-5), min(len(pdf), at+15)
			t.Fatalf("source word %d %q not found in order\nsource: %q\npdf:    %q", si, w, source[lo:hi], pdf[plo:phi])
		}
	}
}

// checkInsideMargins checks that every word lies inside the content box,
// within tol, except page numbers, which belong in the bottom margin.
func checkInsideMargins(t *testing.T, pages []bboxPage, m [4]float64, tol float64) {
	t.Helper()
	for pi, p := range pages {
		for _, w := range p.Words {
			inside := w.X0 >= m[3]-tol && w.X1 <= p.W-m[1]+tol && w.Y0 >= m[0]-tol && w.Y1 <= p.H-m[2]+tol
			if inside {
				continue
			}
			if w.Text == strconv.Itoa(pi+1) && w.Y0 >= p.H-m[2] {
				continue
			}
			t.Errorf("page %d: word %q at (%.1f,%.1f)-(%.1f,%.1f) is outside the margins %v of %.0fx%.0f",
				pi+1, w.Text, w.X0, w.Y0, w.X1, w.Y1, m, p.W, p.H)
		}
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// rasterGray renders the first page at dpi as 8-bit grey pixels.
func rasterGray(t testing.TB, pdf []byte, dpi int) (w, h int, px []byte) {
	return raster(t, pdf, dpi, "-gray")
}

// rasterRGB renders the first page at dpi as 8-bit RGB pixels, three bytes
// a pixel.
func rasterRGB(t testing.TB, pdf []byte, dpi int) (w, h int, px []byte) {
	return raster(t, pdf, dpi)
}

// raster runs pdftoppm on the first page and returns the pixels of the PGM
// or PPM it writes.
func raster(t testing.TB, pdf []byte, dpi int, args ...string) (w, h int, px []byte) {
	out := []byte(run(t, pdf, "pdftoppm", append(append([]string{"-r", strconv.Itoa(dpi)}, args...), "-f", "1", "-l", "1", "-")...))
	var magic string
	var maxval int
	if _, err := fmt.Sscanf(string(out), "%s\n%d %d\n%d\n", &magic, &w, &h, &maxval); err != nil {
		t.Fatalf("pdftoppm output is not a PNM: %v", err)
	}
	size := w * h
	if magic == "P6" {
		size *= 3
	}
	return w, h, out[len(out)-size:]
}
