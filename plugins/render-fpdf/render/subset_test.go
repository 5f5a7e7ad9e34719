package render

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
)

// fontProgram matches how fpdf opens an embedded TrueType font stream.
var fontProgram = regexp.MustCompile(`/Length (\d+)\n/Filter /FlateDecode\n/Length1 (\d+)\n>>\nstream\n`)

// embeddedFonts returns the TrueType programs embedded in pdf, inflated.
func embeddedFonts(t *testing.T, pdf []byte) [][]byte {
	t.Helper()
	var out [][]byte
	for _, m := range fontProgram.FindAllSubmatchIndex(pdf, -1) {
		n, _ := strconv.Atoi(string(pdf[m[2]:m[3]]))
		size, _ := strconv.Atoi(string(pdf[m[4]:m[5]]))
		zr, err := zlib.NewReader(bytes.NewReader(pdf[m[1] : m[1]+n]))
		if err != nil {
			t.Fatal(err)
		}
		font, err := io.ReadAll(zr)
		if err != nil || len(font) != size {
			t.Fatalf("font program of %d bytes (Length1 %d): %v", len(font), size, err)
		}
		out = append(out, font)
	}
	return out
}

// numGlyphs reads maxp.numGlyphs from a TrueType file.
func numGlyphs(t *testing.T, font []byte) int {
	t.Helper()
	n := int(binary.BigEndian.Uint16(font[4:]))
	for i := range n {
		rec := font[12+16*i:]
		if string(rec[:4]) == "maxp" {
			return int(binary.BigEndian.Uint16(font[binary.BigEndian.Uint32(rec[8:])+4:]))
		}
	}
	t.Fatal("no maxp table")
	return 0
}

// TestEmbeddedFontsAreSubsets renders text full of composite glyphs in
// four faces and reads the PDF back: pdffonts lists every font as an
// embedded subset, the text extracts with its accents, and every embedded
// program holds only a few dozen glyphs of the thousands in the face.
func TestEmbeddedFontsAreSubsets(t *testing.T) {
	needTool(t, "pdffonts")
	r := newRenderer(t, `{}`)
	src := "# Ἄλφα ǻ\n\nÉté ñ Å ǻ — ά ὧ ῶ ΐ, ёж й Ї ў, **Ǻ ő ё** *ῗ ṩ* `ǟ ệ й`\n"
	pdf := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: modernTokens}).PDF

	lines := strings.Split(strings.TrimSpace(run(t, pdf, "pdffonts", "-")), "\n")[2:]
	for _, l := range lines {
		// name, type, encoding, emb, sub
		if fs := strings.Fields(l); len(fs) < 5 || fs[1] != "TrueType" || fs[3] != "yes" || fs[4] != "yes" {
			t.Errorf("font not embedded as a TrueType subset: %s", l)
		}
	}
	text := strings.Join(strings.Fields(pdfText(t, pdf)), " ")
	for _, want := range []string{"Ἄλφα ǻ", "Été ñ Å ǻ — ά ὧ ῶ ΐ, ёж й Ї ў, Ǻ ő ё ῗ ṩ ǟ ệ й"} {
		if !strings.Contains(text, want) {
			t.Errorf("%q missing from %q", want, text)
		}
	}

	programs := embeddedFonts(t, pdf)
	if len(programs) != len(lines) || len(lines) < 4 {
		t.Fatalf("%d font programs for %d fonts:\n%s", len(programs), len(lines), strings.Join(lines, "\n"))
	}
	for _, p := range programs {
		face, err := fonts.Parse("embedded", p)
		if err != nil {
			t.Fatalf("embedded font does not parse: %v", err)
		}
		mapped := 0
		for c := rune(1); c < 0xFFFF; c++ {
			if face.Has(c) {
				mapped++
			}
		}
		// The text's characters in this face, their glyphs and the parts
		// of the composite ones: tens, where the faces have thousands.
		if n := numGlyphs(t, p); mapped > 100 || n > 150 || n < 3 {
			t.Errorf("embedded font maps %d characters to %d glyphs: not a subset", mapped, n)
		}
	}
}

// TestManyCharacters renders text drawing over 446 distinct characters in
// the body face, which the PDF holds as three fonts: every word extracts as
// written, and pdffonts lists the face three times.
func TestManyCharacters(t *testing.T) {
	needTool(t, "pdffonts")
	set, err := testFonts()
	if err != nil {
		t.Fatal(err)
	}
	sans := set.Face(fonts.Of(fonts.Sans, fonts.Regular))
	var words []string
	var word []rune
	// Lower-case and caseless letters from Latin-1 to Armenian, all
	// written left to right (pdftotext reorders right-to-left scripts).
	for r := rune(0xC0); r < 0x590; r++ {
		if !unicode.IsLetter(r) || unicode.IsUpper(r) || !sans.Has(r) {
			continue
		}
		if word = append(word, r); len(word) == 6 {
			words, word = append(words, string(word)), nil
		}
	}
	if len(words)*6 <= 2*223 {
		t.Fatalf("only %d words: too few characters for three fonts", len(words))
	}
	r := newRenderer(t, `{}`)
	src := strings.Join(words, " ") + "\n"
	pdf := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: modernTokens}).PDF

	got := " " + strings.Join(strings.Fields(pdfText(t, pdf)), " ") + " "
	for _, w := range words {
		if !strings.Contains(got, " "+w+" ") {
			t.Errorf("word %q missing from the text", w)
		}
	}
	n := strings.Count(run(t, pdf, "pdffonts", "-"), "+DejaVuSans ")
	if n != 3 {
		t.Errorf("the body face is embedded as %d fonts, want 3", n)
	}
}
