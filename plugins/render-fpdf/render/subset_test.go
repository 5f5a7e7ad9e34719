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
