package watermark

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// testdata/chromium.pdf is two A5 pages that render-chrome printed (Chromium
// 156): a heading, "Paragraph 0" to "Paragraph 29", and page numbers.
func chromiumPDF(t testing.TB) []byte {
	t.Helper()
	pdf, err := os.ReadFile(filepath.Join("testdata", "chromium.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	return pdf
}

func needTool(t testing.TB, name string) {
	t.Helper()
	if _, err := exec.LookPath(name); err != nil {
		t.Skipf("%s not installed (poppler-utils / qpdf)", name)
	}
}

// tool runs a poppler or qpdf command on pdf, given as the argument "{}",
// and returns its output.
func tool(t testing.TB, pdf []byte, name string, args ...string) string {
	t.Helper()
	needTool(t, name)
	path := filepath.Join(t.TempDir(), "in.pdf")
	if err := os.WriteFile(path, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	args = slices.Clone(args)
	args[slices.Index(args, "{}")] = path
	out, err := exec.Command(name, args...).Output()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
	return string(out)
}

// pageTexts is pdftotext's text of each page, in content order.
func pageTexts(t testing.TB, pdf []byte) []string {
	t.Helper()
	return strings.Split(strings.TrimRight(tool(t, pdf, "pdftotext", "-raw", "{}", "-"), "\f\n"), "\f")
}

// hasMark reports whether a page's text holds the mark: drawn diagonally,
// it comes out a glyph or two a line, so spaces are ignored.
func hasMark(page, mark string) bool {
	squeeze := func(s string) string { return strings.Join(strings.Fields(s), "") }
	return strings.Contains(squeeze(page), squeeze(mark))
}

// checkStamped checks what every stamp must give: the original
// rewritten, a file qpdf finds sound, the same pages of the same sizes,
// and each page's own text and the mark on it.
func checkStamped(t *testing.T, in, out []byte, mark string, pageText []string) {
	t.Helper()
	checkRewritten(t, in, out)
	tool(t, out, "qpdf", "--check", "{}")
	sizes := func(pdf []byte) []string {
		return regexp.MustCompile(`(?m)^(Pages|Page +\d+ size):.*$`).FindAllString(tool(t, pdf, "pdfinfo", "-f", "1", "-l", "99", "{}"), -1)
	}
	if a, b := sizes(in), sizes(out); fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("pages changed:\n%v\n%v", a, b)
	}
	texts := pageTexts(t, out)
	if len(texts) != len(pageText) {
		t.Fatalf("%d pages of text, want %d", len(texts), len(pageText))
	}
	for i, text := range texts {
		if !hasMark(text, pageText[i]) {
			t.Errorf("page %d lost its text %q:\n%s", i+1, pageText[i], text)
		}
		if !hasMark(text, mark) {
			t.Errorf("page %d has no mark %q:\n%s", i+1, mark, text)
		}
	}
}

func TestStampChromiumPDF(t *testing.T) {
	in := chromiumPDF(t)
	out, err := Stamp(in, Mark{Text: "mdpress free plan", Margins: [4]float64{40, 40, 46, 40}})
	if err != nil {
		t.Fatal(err)
	}
	checkStamped(t, in, out, "mdpress free plan", []string{"Paragraph 0", "Paragraph 29"})
	if got := pageTexts(t, in); hasMark(got[0], "mdpress free plan") {
		t.Fatal("the test PDF already holds the mark")
	}
}

// build writes a PDF of the given objects (numbered from 1, the catalog
// first) with a classic cross-reference table.
func build(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	start := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f\r\n", len(objs)+1)
	for _, off := range offs {
		fmt.Fprintf(&b, "%010d 00000 n\r\n", off)
	}
	fmt.Fprintf(&b, "trailer\n<</Size %d /Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, start)
	return b.Bytes()
}

func stream(data string) string {
	return fmt.Sprintf("<</Length %d>>\nstream\n%s\nendstream", len(data), data)
}

// handPDF has what Chromium does not write but a PDF may: resources and
// a media box inherited from the page tree, indirect resource
// dictionaries, a content array (direct and indirect), a page without
// content, a resource already named like the mark's, and content that
// leaves the graphics state scaled and white.
func handPDF() []byte { return build(handObjects()...) }

func handObjects() []string {
	return []string{
		`<</Type /Catalog /Pages 2 0 R>>`,
		`<</Type /Pages /Kids [3 0 R 4 0 R 5 0 R] /Count 3 /MediaBox [0 0 300 400] /Resources 6 0 R>>`,
		`<</Type /Page /Parent 2 0 R /Contents [7 0 R 8 0 R]>>`,
		`<</Type /Page /Parent 2 0 R /MediaBox [0 0 400 300] /Resources <</Font 9 0 R /ProcSet [/PDF /Text]>> /Contents 10 0 R>>`,
		`<</Type /Page /Parent 2 0 R /Resources <</ExtGState <</MdpressWatermark 12 0 R>>>>>>`,
		`<</Font <</F1 11 0 R>> /ProcSet [/PDF /Text]>>`,
		stream("BT /F1 12 Tf 1 0 0 1 20 250 Tm (Hello page) Tj ET"),
		stream("3 0 0 3 0 0 cm 1 1 1 rg"),
		`<</F1 11 0 R>>`,
		`[7 0 R]`,
		`<</Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding>>`,
		`<</Type /ExtGState /ca 1>>`,
	}
}

func TestStampStructures(t *testing.T) {
	in := handPDF()
	tool(t, in, "qpdf", "--check", "{}")
	out, err := Stamp(in, Mark{Text: "DRAFT"})
	if err != nil {
		t.Fatal(err)
	}
	checkStamped(t, in, out, "DRAFT", []string{"Hello page", "Hello page", ""})
	if !bytes.Contains(out, []byte("/MdpressWatermark1 gs")) {
		t.Error("the mark did not avoid the resource name a page already uses")
	}
	// The mark sits on the page's centre, whatever the content left in the
	// graphics state (within what letter shapes shift a box around ink).
	before, after := rasters(t, in), rasters(t, out)
	for i := range after {
		ink := changed(before[i], after[i])
		cx, cy := float64(after[i].w)/2, float64(after[i].h)/2
		if x, y := ink.centre(); ink.n == 0 || math.Abs(x-cx) > 8 || math.Abs(y-cy) > 8 {
			t.Errorf("page %d: the mark's %d pixels centre on %.1f,%.1f, want %.1f,%.1f", i+1, ink.n, x, y, cx, cy)
		}
	}

	// A stamped file stamps again: the newest version of each object wins.
	again, err := Stamp(out, Mark{Text: "AGAIN"})
	if err != nil {
		t.Fatal(err)
	}
	checkStamped(t, out, again, "AGAIN", []string{"DRAFT", "DRAFT", "DRAFT"})
}

func TestStampCentresOnTextArea(t *testing.T) {
	in := build(
		`<</Type /Catalog /Pages 2 0 R>>`,
		`<</Type /Pages /Kids [3 0 R] /Count 1>>`,
		`<</Type /Page /Parent 2 0 R /MediaBox [0 0 600 800] /Resources <<>>>>`,
	)
	// top 100, right 20, bottom 60, left 80: the area's centre is at
	// (80+580)/2 = 330 from the left, (100+740)/2 = 420 from the top.
	out, err := Stamp(in, Mark{Text: "CENTRE", Margins: [4]float64{100, 20, 60, 80}})
	if err != nil {
		t.Fatal(err)
	}
	ink := changed(rasters(t, in)[0], rasters(t, out)[0])
	if x, y := ink.centre(); math.Abs(x-330) > 8 || math.Abs(y-420) > 8 {
		t.Errorf("the mark's %d pixels centre on %.1f,%.1f, want 330,420", ink.n, x, y)
	}
	// Diagonal: its box is about as high as it is wide.
	if w, h := ink.x1-ink.x0, ink.y1-ink.y0; w < 100 || math.Abs(w-h) > w/4 {
		t.Errorf("the mark's box is %.0f x %.0f: not a diagonal line across the page", w, h)
	}
}

// raster is one page in grey, a pixel a point.
type raster struct {
	w, h int
	pix  []byte
}

// rasters renders every page of pdf at 72 dpi.
func rasters(t *testing.T, pdf []byte) []raster {
	t.Helper()
	needTool(t, "pdftoppm")
	dir := t.TempDir()
	in := filepath.Join(dir, "in.pdf")
	if err := os.WriteFile(in, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("pdftoppm", "-r", "72", "-gray", in, filepath.Join(dir, "p")).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, out)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "p*.pgm"))
	slices.Sort(files)
	var out []raster
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		// P5, width, height, maxval, one white space, then the pixels.
		var r raster
		var magic string
		var maxval int
		_, err = fmt.Sscan(string(b[:min(len(b), 40)]), &magic, &r.w, &r.h, &maxval)
		if err != nil || magic != "P5" || maxval != 255 || len(b) < r.w*r.h {
			t.Fatalf("%s: not a PGM (%v)", f, err)
		}
		r.pix = b[len(b)-r.w*r.h:]
		out = append(out, r)
	}
	return out
}

// ink is where two rasters of a page differ: how many pixels, and their
// box.
type ink struct {
	n              int
	x0, y0, x1, y1 float64
}

// centre is the middle of the box, that of a diagonal line of text (its
// centroid lies toward its heavier letters).
func (k ink) centre() (x, y float64) { return (k.x0 + k.x1) / 2, (k.y0 + k.y1) / 2 }

func changed(a, b raster) ink {
	var k ink
	if a.w != b.w || a.h != b.h {
		return k
	}
	k.x0, k.y0 = math.Inf(1), math.Inf(1)
	k.x1, k.y1 = math.Inf(-1), math.Inf(-1)
	for i := range a.pix {
		if a.pix[i] == b.pix[i] {
			continue
		}
		x, y := float64(i%a.w), float64(i/a.w)
		k.n++
		k.x0, k.y0, k.x1, k.y1 = min(k.x0, x), min(k.y0, y), max(k.x1, x), max(k.y1, y)
	}
	return k
}

func TestStampRefuses(t *testing.T) {
	in := chromiumPDF(t)
	loop := build(
		`<</Type /Catalog /Pages 2 0 R>>`,
		`<</Type /Pages /Kids [2 0 R] /Count 1>>`,
	)
	onePage := build(
		`<</Type /Catalog /Pages 2 0 R>>`,
		`<</Type /Pages /Kids [3 0 R] /Count 1>>`,
		`<</Type /Page /Parent 2 0 R /MediaBox [0 0 600 800] /Resources <<>>>>`,
	)
	// with replaces old, once, in onePage.
	with := func(old, new string) func(*testing.T) []byte {
		return func(t *testing.T) []byte {
			if !bytes.Contains(onePage, []byte(old)) {
				t.Fatalf("no %q in the PDF", old)
			}
			return bytes.Replace(onePage, []byte(old), []byte(new), 1)
		}
	}
	tests := []struct {
		name        string
		pdf         func(t *testing.T) []byte
		unsupported bool
	}{
		// The new objects would take the numbers of the page tree and the
		// page: the page would be lost, or drawn without its mark.
		{"/Size below the objects", with("/Size 4", "/Size 2"), false},
		// Numbered past an int, or PDF's limit: negative numbers out.
		{"/Size past the limit", with("/Size 4", "/Size 99999999999999999999"), false},
		{"/Size as an exponent", with("/Size 4", "/Size 1e300"), false},
		{"infinite page box", with("600", "+Inf"), false},
		{"not a pdf", func(*testing.T) []byte { return []byte("hello") }, false},
		{"empty", func(*testing.T) []byte { return nil }, false},
		{"truncated", func(*testing.T) []byte { return in[:len(in)/2] }, false},
		{"bad startxref", func(*testing.T) []byte { return bytes.Replace(in, []byte("startxref\n"), []byte("startxref\n9"), 1) }, false},
		{"page tree loop", func(*testing.T) []byte { return loop }, false},
		{"no pages", func(*testing.T) []byte {
			return build(`<</Type /Catalog /Pages 2 0 R>>`, `<</Type /Pages /Kids [] /Count 0>>`)
		}, false},
		{"cross-reference stream", func(t *testing.T) []byte { return qpdf(t, in, "--object-streams=generate") }, true},
		{"encrypted", func(t *testing.T) []byte { return qpdf(t, in, "--encrypt", "", "owner", "128", "--use-aes=y", "--") }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, err := Stamp(tt.pdf(t), Mark{Text: "X"})
			if err == nil {
				t.Fatalf("stamped (%d bytes), want an error", len(out))
			}
			if got := errors.Is(err, errUnsupported); got != tt.unsupported {
				t.Fatalf("error %v: unsupported = %v, want %v", err, got, tt.unsupported)
			}
		})
	}
}

// qpdf rewrites pdf with the given options.
func qpdf(t *testing.T, pdf []byte, args ...string) []byte {
	t.Helper()
	needTool(t, "qpdf")
	dir := t.TempDir()
	in, out := filepath.Join(dir, "in.pdf"), filepath.Join(dir, "out.pdf")
	if err := os.WriteFile(in, pdf, 0o644); err != nil {
		t.Fatal(err)
	}
	if b, err := exec.Command("qpdf", append(append(args, in), out)...).CombinedOutput(); err != nil {
		t.Fatalf("qpdf %v: %v\n%s", args, err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestNothingToDraw(t *testing.T) {
	in := chromiumPDF(t)
	for _, text := range []string{"", " \t\n", "\x00\x07"} {
		out, err := Stamp(in, Mark{Text: text})
		if err != nil || !bytes.Equal(out, in) {
			t.Errorf("%q: changed the PDF (err %v)", text, err)
		}
	}
}

func TestEncode(t *testing.T) {
	tests := []struct{ in, want string }{
		{"mdpress free plan", "mdpress free plan"},
		{"  Café crème  ", "Caf\xe9 cr\xe8me"},
		{"€5 – “quoted”", "\x805 \x96 \x93quoted\x94"},
		{"草稿 draft", "?? draft"},
		{"a\x00b\tc\u0085d\x7f", "abcd"},
		{"\xff", "?"}, // invalid UTF-8
	}
	for _, tt := range tests {
		if got := string(encode(tt.in)); got != tt.want {
			t.Errorf("encode(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestLiteralAndNum(t *testing.T) {
	if got, want := literal([]byte("a(b)\\c\xe9\n")), `(a\(b\)\\c\351\012)`; got != want {
		t.Errorf("literal = %s, want %s", got, want)
	}
	for v, want := range map[float64]string{0.28: "0.28", 1: "1", -0.00001: "0", 12.345678: "12.3457", 1e9: "1000000000", -2.5: "-2.5"} {
		if got := num(v); got != want {
			t.Errorf("num(%v) = %q, want %q", v, got, want)
		}
	}
}

func TestContentGeometry(t *testing.T) {
	box := [4]float64{0, 0, 420, 595.92}
	margins := [4]float64{40, 40, 46, 40}
	text := encode("SAMPLE")
	c := string(content(box, margins, text, "N"))
	m := regexp.MustCompile(`/N ([\d.]+) Tf\n([\d.]+) Tc\n([-\d. ]+) Tm`).FindStringSubmatch(c)
	if m == nil {
		t.Fatalf("no Tf, Tc, Tm in\n%s", c)
	}
	size, _ := strconv.ParseFloat(m[1], 64)
	tc, _ := strconv.ParseFloat(m[2], 64)
	var tm [6]float64
	for i, f := range strings.Fields(m[3]) {
		tm[i], _ = strconv.ParseFloat(f, 64)
	}
	// The style stage's size for this page and text.
	w, h := 420.0-80, 595.92-86
	want := math.Min(0.75*math.Hypot(w, h)/(0.68*6), 0.2*math.Min(w, h))
	if math.Abs(size-want) > 0.01 || math.Abs(tc-0.04*size) > 0.01 {
		t.Errorf("size %.2f spacing %.2f, want %.2f and %.2f", size, tc, want, 0.04*want)
	}
	if math.Abs(tm[0]-math.Sqrt2/2) > 1e-3 || math.Abs(tm[1]-math.Sqrt2/2) > 1e-3 {
		t.Errorf("Tm %v is not a 45 degree rotation", tm)
	}
	// The middle of the line, half its advance along the baseline and half
	// the cap height up, is the text area's centre.
	adv := advance(text)*size + tc*5
	mx := tm[4] + tm[0]*adv/2 + tm[2]*capHeight*size/2
	my := tm[5] + tm[1]*adv/2 + tm[3]*capHeight*size/2
	if cx, cy := 40+w/2, 46+h/2; math.Abs(mx-cx) > 0.01 || math.Abs(my-cy) > 0.01 {
		t.Errorf("the line's middle is at %.2f,%.2f, want %.2f,%.2f", mx, my, cx, cy)
	}
	for _, want := range []string{"Q\nq\n/Artifact", "/N gs", "0.4706 0.4706 0.4706 rg", "1 1 1 RG", "1 Tr\n", "0 Tr\n", "(SAMPLE) Tj"} {
		if !strings.Contains(c, want) {
			t.Errorf("content lacks %q:\n%s", want, c)
		}
	}
}

// BenchmarkStamp stamps the two-page Chromium PDF; render-chrome's
// BenchmarkStampPrinted stamps longer ones.
func BenchmarkStamp(b *testing.B) {
	in := chromiumPDF(b)
	b.ReportAllocs()
	b.SetBytes(int64(len(in)))
	for b.Loop() {
		if _, err := Stamp(in, Mark{Text: "mdpress free plan"}); err != nil {
			b.Fatal(err)
		}
	}
}

// sharedPDF has pages pages that inherit one indirect resource dictionary
// of pages fonts from the page tree.
func sharedPDF(pages int) []byte {
	var fonts, kids strings.Builder
	for i := range pages {
		fmt.Fprintf(&fonts, "/F%d 3 0 R\n", i)
		fmt.Fprintf(&kids, "%d 0 R ", i+5)
	}
	objs := []string{
		`<</Type /Catalog /Pages 2 0 R>>`,
		`<</Type /Pages /Kids [` + kids.String() + `] /Count ` + strconv.Itoa(pages) + ` /MediaBox [0 0 300 400] /Resources 4 0 R>>`,
		`<</Type /Font /Subtype /Type1 /BaseFont /Helvetica>>`,
		`<</Font <<` + fonts.String() + `>>>>`,
	}
	for range pages {
		objs = append(objs, `<</Type /Page /Parent 2 0 R>>`)
	}
	return build(objs...)
}

// TestStampSharedResources: what pages share is read once and not copied
// past a bound, so that the time and the output stay linear in the file
// (twice the pages and fonts here, four times the copies).
func TestStampSharedResources(t *testing.T) {
	allocs := make(map[int]float64)
	for _, pages := range []int{300, 600} {
		in := sharedPDF(pages)
		out, err := Stamp(in, Mark{Text: "SHARED"})
		switch {
		case errors.Is(err, errUnsupported): // refused rather than copied
		case err != nil:
			t.Fatalf("%d pages: %v", pages, err)
		case len(out) > maxSize(len(in), pages+4):
			t.Fatalf("%d pages: %d bytes stamped for %d of file", pages, len(out), len(in))
		}
		allocs[pages] = testing.AllocsPerRun(2, func() { _, _ = Stamp(in, Mark{Text: "SHARED"}) })
	}
	if r := allocs[600] / allocs[300]; r > 3 {
		t.Errorf("%.0f allocations for 300 pages, %.0f for 600: quadratic", allocs[300], allocs[600])
	}
}

// TestPageCount counts by the page tree, so a stamped file has as many
// pages as it had, and a string that spells a page object is no page.
func TestPageCount(t *testing.T) {
	stamped, err := Stamp(chromiumPDF(t), Mark{Text: "X"})
	if err != nil {
		t.Fatal(err)
	}
	spelled := build(
		`<</Type /Catalog /Pages 2 0 R /URI (/Type /Page)>>`,
		`<</Type /Pages /Kids [3 0 R] /Count 1 /T (<</Type /Page>>)>>`,
		`<</Type /Page /Parent 2 0 R /MediaBox [0 0 600 800]>>`,
	)
	for name, tt := range map[string]struct {
		pdf  []byte
		want int
	}{
		"chromium": {chromiumPDF(t), 2},
		"stamped":  {stamped, 2},
		"hand":     {handPDF(), 3},
		"spelled":  {spelled, 1},
	} {
		if got, err := PageCount(tt.pdf); err != nil || got != tt.want {
			t.Errorf("%s: %d pages (%v), want %d", name, got, err, tt.want)
		}
	}
	if _, err := PageCount([]byte("%PDF-1.4\n")); err == nil {
		t.Error("counted the pages of a PDF without any")
	}
}
