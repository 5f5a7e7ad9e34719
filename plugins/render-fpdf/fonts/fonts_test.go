package fonts

import (
	"bytes"
	"fmt"
	"math"
	"os/exec"
	"strings"
	"testing"

	"github.com/go-pdf/fpdf"
)

const sample = "Hello, world — αβγ Привет → ┌─┐ “quotes” 0123456789 fi ﬁ Äéñ ǅ Ǻ ő"

func loadSet(t testing.TB) *Set {
	t.Helper()
	s, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func runesOf(s string) *Runes {
	var r Runes
	for _, c := range s {
		r.Add(c)
	}
	return &r
}

// TestWidthsMatchFpdf checks that the metrics layout uses are the ones fpdf
// positions glyphs with, for the full font and for the per-document copy.
func TestWidthsMatchFpdf(t *testing.T) {
	set := loadSet(t)
	for id := ID(0); id < Count; id++ {
		face := set.Face(id)
		full, err := File(id)
		if err != nil {
			t.Fatal(err)
		}
		cases := map[string][]byte{"subset": face.Subset(runesOf(sample))}
		if id.Style() == Regular { // fpdf parsing whole fonts is slow under -race
			cases["full"] = full
		}
		for name, data := range cases {
			t.Run(face.Name+"/"+name, func(t *testing.T) {
				pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: 600, Ht: 800}})
				pdf.AddUTF8FontFromBytes("f", "", data)
				pdf.SetFont("f", "", 1000)
				for _, r := range sample {
					if !face.Has(r) {
						continue
					}
					want := pdf.GetStringWidth(string(r))
					if got := float64(face.Width(r)); math.Abs(got-want) > 1e-9 {
						t.Errorf("%q: width %v, fpdf %v", r, got, want)
					}
				}
				if err := pdf.Error(); err != nil {
					t.Fatal(err)
				}
			})
		}
	}
}

func TestCoverage(t *testing.T) {
	set := loadSet(t)
	sans := set.Face(Of(Sans, Regular))
	for _, r := range "aÄαЖ→┌•◦▪�" {
		if !sans.Has(r) {
			t.Errorf("sans lacks %q", r)
		}
	}
	if sans.Has('\U0001F600') || sans.Has(0) || sans.Has(-1) {
		t.Error("Has must be false outside the BMP and for invalid runes")
	}
	if set.Face(Of(Serif, Regular)).Has('✓') {
		t.Error("serif was expected to lack U+2713; the fallback test relies on it")
	}
}

func TestRunes(t *testing.T) {
	var s Runes
	for _, r := range "bca\U0001F600b" {
		s.Add(r)
	}
	var got []rune
	s.Each(func(r rune) { got = append(got, r) })
	if string(got) != "abc" || s.Len() != 3 || !s.Has('a') || s.Has('d') {
		t.Errorf("got %q len %d", string(got), s.Len())
	}
}

// TestSubsetRendersLikeFull draws text full of composite glyphs in four
// faces three ways: fpdf parsing the whole font file, fpdf parsing the
// compact per-document copy, and Embed (simple fonts made from copies).
// The rasterized pages must match pixel for pixel: a glyph or composite
// part renumbered wrongly would draw another shape.
func TestSubsetRendersLikeFull(t *testing.T) {
	if _, err := exec.LookPath("pdftoppm"); err != nil {
		t.Skip("pdftoppm not installed")
	}
	set := loadSet(t)
	used := runesOf(sample + accented)
	for _, id := range []ID{Of(Sans, Regular), Of(Serif, Italic), Of(Mono, Bold), Of(Sans, BoldItalic)} {
		face := set.Face(id)
		full, err := File(id)
		if err != nil {
			t.Fatal(err)
		}
		// What the face lacks, the layout replaces with U+FFFD.
		lines := []string{drawable(face, sample), drawable(face, accented)}
		render := func(add func(*fpdf.Fpdf) *Embedded) []byte {
			pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: 640, Ht: 90}})
			e := add(pdf)
			pdf.AddPage()
			for i, l := range lines {
				drawText(pdf, e, 14, 10, float64(30+30*i), l)
			}
			var buf bytes.Buffer
			if err := pdf.Output(&buf); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command("pdftoppm", "-r", "100", "-gray", "-")
			cmd.Stdin = &buf
			out, err := cmd.Output()
			if err != nil {
				t.Fatal(err)
			}
			return out
		}
		utf8Font := func(data []byte) func(*fpdf.Fpdf) *Embedded {
			return func(pdf *fpdf.Fpdf) *Embedded {
				pdf.AddUTF8FontFromBytes(face.Name, "", data)
				return &Embedded{face: face, families: []string{face.Name}, utf8: true}
			}
		}
		want := render(utf8Font(full))
		parsed := render(utf8Font(face.Subset(used)))
		embedded := render(func(pdf *fpdf.Fpdf) *Embedded { return set.Embed(pdf, id, used) })
		if !bytes.Equal(parsed, want) {
			t.Errorf("%s: the per-document copy renders differently from the full font", face.Name)
		}
		if !bytes.Equal(embedded, want) {
			t.Errorf("%s: Embed renders differently from the full font", face.Name)
		}
		var w, h, maxval int
		if _, err := fmt.Sscanf(string(want), "P5\n%d %d\n%d\n", &w, &h, &maxval); err != nil {
			t.Fatalf("not a PGM: %v", err)
		}
		dark := 0
		for _, p := range want[len(want)-w*h:] {
			if p < 128 {
				dark++
			}
		}
		if dark < 1000 {
			t.Fatalf("%s: only %d dark pixels: nothing drawn", face.Name, dark)
		}
	}
}

// drawable is s without the characters face lacks.
func drawable(face *Face, s string) string {
	return strings.Map(func(r rune) rune {
		if r == ' ' || face.Has(r) {
			return r
		}
		return -1
	}, s)
}

// TestCompositeGlyphs makes sure the sample exercises glyphs built from
// other glyphs, whose parts a per-document copy must keep.
func TestCompositeGlyphs(t *testing.T) {
	f := loadSet(t).Face(Of(Sans, Regular))
	n := 0
	for _, r := range sample {
		g := f.glyph[r]
		if len(components(f.glyf[f.loca[g]:f.loca[g+1]])) > 0 {
			n++
		}
	}
	if n < 3 {
		t.Errorf("sample has %d composite glyphs, want at least 3", n)
	}
}

// TestExtent: glyph extents come from the outlines: "x" sits on the
// baseline below "b"'s ascender, "p" reaches below it, a space nowhere.
func TestExtent(t *testing.T) {
	set, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	f := set.Face(Of(Serif, Regular))
	ext := func(r rune) (float64, float64) {
		a, d, ok := f.Extent(r)
		if !ok {
			t.Fatalf("no %q", r)
		}
		return a, d
	}
	xa, xd := ext('x')
	ba, _ := ext('b')
	_, pd := ext('p')
	sa, sd := ext(' ')
	if xa < 0.4 || xa > 0.6 || xd > 0.01 || ba < 0.7 || ba > 0.8 || pd < 0.15 || pd > 0.3 || sa != 0 || sd != 0 {
		t.Errorf("x %.3f/%.3f, b %.3f, p descends %.3f, space %.3f/%.3f", xa, xd, ba, pd, sa, sd)
	}
	if _, _, ok := f.Extent(0x4E00); ok {
		t.Error("an extent for a character the face lacks")
	}
}
