package render

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/plugins/render-fpdf/layout"
	"github.com/mdpress/mdpress/plugins/render-fpdf/paint"
)

// withoutBidiMarks drops the embedding marks pdftotext wraps
// right-to-left runs in.
var withoutBidiMarks = strings.NewReplacer("\u202a", "", "\u202b", "", "\u202c", "", "\u200e", "", "\u200f", "")

func runeRange(from, to rune) []rune {
	var out []rune
	for r := from; r <= to; r++ {
		out = append(out, r)
	}
	return out
}

func noSpace(s string) string { return strings.Join(strings.Fields(s), "") }

// hasForm reports an Arabic presentation form in s.
func hasForm(s string) bool {
	for _, r := range s {
		if r >= 0xFB50 && r <= 0xFDFF || r >= 0xFE70 && r <= 0xFEFF {
			return true
		}
	}
	return false
}

// TestArabicExtractsAsWritten checks that text extracted from the PDF
// (pdftotext, in reading order, and its words with -bbox) holds the
// letters written, not the presentation forms they are drawn with, and
// lam-alef in its order, in every position a word of Arabic can take.
func TestArabicExtractsAsWritten(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	long := strings.Repeat("استقلالية", 24) // wider than the column: cut between characters
	// Over 223 characters of one face: it is embedded as several fonts,
	// the brackets in the first, the presentation forms in another, so a
	// word's part is drawn in two text objects.
	var many strings.Builder
	for i, r := range append(append(runeRange(0xC0, 0x17F), runeRange(0x3B1, 0x3C9)...), runeRange(0x410, 0x44F)...) {
		if i%20 == 0 {
			many.WriteByte(' ')
		}
		many.WriteRune(r)
	}
	for _, tc := range []struct{ name, md, want string }{
		{"words", "مرحبا بالعالم", "مرحبا بالعالم"},
		{"lam-alef", "السلام عليكم، لا إله إلا الله، الأقلام", "السلام عليكم، لا إله إلا الله، الأقلام"},
		{"in a left-to-right line", "Hello مرحبا world السلام end", "Hello مرحبا world السلام end"},
		{"numbers inside", "في عام 2020 كان 15% من السكان و3.5 مليون", "في عام 2020 كان 15% من السكان و3.5 مليون"},
		{"bold inside a word", "**ال**كتاب جميل", "الكتاب جميل"},
		{"italic", "*مكتبة* كبيرة", "مكتبة كبيرة"},
		{"inline code", "نص `كود عربي` هنا", "نص كود عربي هنا"},
		{"heading", "# عنوان السلام", "عنوان السلام"},
		{"hebrew", "שלום עולם 123 טקסט", "שלום עולם 123 טקסט"},
		{"brackets", "مرحبا (بالعالم) هنا و(تقريبا)", "مرحبا (بالعالم) هنا و(تقريبا)"},
		{"hebrew brackets", "מחיר (עולם) [א] {ב} «ג»", "מחיר (עולם) [א] {ב} «ג»"},
		{"a word in two fonts", "مرحبا (بالعالم) هنا\n\n" + many.String(), "مرحبا (بالعالم) هنا" + many.String()},
		{"word cut by a line break", long, long},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdf := renderPDF(t, r, req{doc: markdownDoc(t, tc.md), tokens: modernTokens, numbering: "none"}).PDF
			got := strings.TrimSpace(withoutBidiMarks.Replace(readingText(t, pdf)))
			if tc.name == "word cut by a line break" {
				if !strings.Contains(got, "\n") {
					t.Fatalf("the word was not cut: %q", got)
				}
				got = strings.ReplaceAll(got, "\n", "")
			}
			// pdftotext sets the spaces next to a run of the other
			// direction inside its embedding marks, not where they were
			// written: the characters are compared without them.
			if noSpace(got) != noSpace(tc.want) {
				t.Errorf("pdftotext reads\n%q\nwant\n%q", got, tc.want)
			}
			for _, page := range pdfBoxes(t, pdf) {
				for _, w := range page.Words {
					if hasForm(w.Text) {
						t.Errorf("pdftotext -bbox word %q holds presentation forms", w.Text)
					}
				}
			}
		})
	}
}

// TestArabicActualTextDrawsTheSame checks that the spans that give
// Arabic its letters change nothing drawn: the page painted from the
// same display list with the spans and without them rasterizes to the
// same pixels, and only the spans make the difference in what is
// extracted.
func TestArabicActualTextDrawsTheSame(t *testing.T) {
	needTool(t, "pdftoppm")
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	page, _ := papers.Lookup("A4")
	md := "# عنوان السلام\n\nمرحبا بالعالم، Hello السلام 2020 **ال**كتاب *مكتبة* `كود` (تقريبا) שלום\n\n" +
		strings.Repeat("استقلالية", 24) + "\n\n| الاسم | العمر |\n|---|---|\n| أحمد | 30 |\n"
	paintDoc := func(marked bool) []byte {
		doc, err := layout.Layout(context.Background(), markdownDoc(t, md).Root, layout.Options{Page: page, Tokens: modernTokens, Fonts: set})
		if err != nil {
			t.Fatal(err)
		}
		shaped := 0
		for _, p := range doc.Pages {
			for i := range p.Items {
				if p.Items[i].Actual != 0 {
					shaped++
				}
				if !marked {
					p.Items[i].Actual = 0
				}
			}
		}
		if marked && shaped == 0 {
			t.Fatal("no text item has parts that stand for other characters")
		}
		pdf, err := paint.Paint(context.Background(), doc, paint.Options{Fonts: set, Compress: true})
		if err != nil {
			t.Fatal(err)
		}
		return pdf
	}
	with, without := paintDoc(true), paintDoc(false)
	w1, h1, px1 := rasterRGB(t, with, 150)
	w2, h2, px2 := rasterRGB(t, without, 150)
	if w1 != w2 || h1 != h2 || !bytes.Equal(px1, px2) {
		t.Error("the page with ActualText spans rasterizes differently from the page without")
	}
	if !hasForm(pdfText(t, without)) {
		t.Error("without the spans no presentation form is extracted: the test proves nothing")
	}
	if hasForm(pdfText(t, with)) {
		t.Error("presentation forms are extracted despite the spans")
	}
}
