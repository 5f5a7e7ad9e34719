package fonts

import (
	"bytes"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	"github.com/go-pdf/fpdf"
)

// drawText draws s with e at (x, y), a piece per font, as the painter does.
func drawText(pdf *fpdf.Fpdf, e *Embedded, size, x, y float64, s string) {
	e.Each(s, func(family, text string, advance int) {
		pdf.SetFont(family, "", size)
		pdf.Text(x, y, text)
		x += float64(advance) * size / 1000
	})
}

// drawLines writes lines in three faces of the set into a one-page PDF,
// with the per-document fonts or, if full, fpdf's UTF-8 fonts made from
// the whole font files.
func drawLines(t testing.TB, s *Set, full bool, lines ...string) []byte {
	t.Helper()
	ids := []ID{Of(Sans, Regular), Of(Serif, BoldItalic), Of(Mono, Bold)}
	pdf := fpdf.NewCustom(&fpdf.InitType{UnitStr: "pt", Size: fpdf.SizeType{Wd: 640, Ht: float64(20 + 40*len(ids)*len(lines))}})
	pdf.SetCompression(false)
	pdf.SetCatalogSort(true)
	pdf.SetCreationDate(time.Unix(0, 0))
	pdf.SetModificationDate(time.Unix(0, 0))
	used := runesOf(strings.Join(lines, ""))
	var faces []*Embedded
	for _, id := range ids {
		if !full {
			faces = append(faces, s.Embed(pdf, id, used))
			continue
		}
		e, err := s.EmbedFull(pdf, id)
		if err != nil {
			t.Fatal(err)
		}
		faces = append(faces, e)
	}
	pdf.AddPage()
	y := 30.0
	for _, e := range faces {
		for _, l := range lines {
			drawText(pdf, e, 11, 10, y, l)
			y += 40
		}
	}
	var buf bytes.Buffer
	if err := pdf.Output(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func tool(t *testing.T, pdf []byte, name string, args ...string) []byte {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Stdin = bytes.NewReader(pdf)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return out
}

// manyRunes is text drawing 600 distinct characters in each face, so that
// each is embedded as three simple fonts and lines switch between them.
func manyRunes(t *testing.T, s *Set) []string {
	t.Helper()
	var b strings.Builder
	n := 0
	for r := rune(0x21); n < 600; r++ {
		drawn := unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsPunct(r) || unicode.IsSymbol(r)
		if drawn && s.Face(Of(Sans, Regular)).Has(r) && s.Face(Of(Serif, BoldItalic)).Has(r) && s.Face(Of(Mono, Bold)).Has(r) {
			b.WriteRune(r)
			if n++; n%60 == 0 {
				b.WriteByte('\n')
			} else if n%7 == 0 {
				b.WriteByte(' ')
			}
		}
	}
	return strings.Split(strings.TrimSpace(b.String()), "\n")
}

// TestEmbedDrawsLikeUTF8Fonts checks the per-document simple fonts against
// fpdf's UTF-8 fonts made from the whole font files: the same pixels and
// the same extracted text, for a line of composite glyphs and for ten
// lines of 600 characters, which take three fonts per face.
func TestEmbedDrawsLikeUTF8Fonts(t *testing.T) {
	for _, name := range []string{"pdftoppm", "pdftotext", "pdffonts"} {
		if _, err := exec.LookPath(name); err != nil {
			t.Skipf("%s not installed", name)
		}
	}
	s := loadSet(t)
	for _, tc := range []struct {
		name  string
		lines []string
		fonts int
	}{
		{"sample", []string{drawable(s.Face(Of(Mono, Bold)), sample+" "+accented)}, 3},
		{"600 characters", manyRunes(t, s), 9},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, b := drawLines(t, s, false, tc.lines...), drawLines(t, s, true, tc.lines...)
			// One font per face: the same pixels. Several: a line drawn in
			// pieces starts each at a position fpdf rounds to 0.01 pt,
			// which shifts a few edge pixels by a shade; a wrong glyph
			// would change thousands.
			pa, pb := tool(t, a, "pdftoppm", "-r", "72", "-gray", "-"), tool(t, b, "pdftoppm", "-r", "72", "-gray", "-")
			differ := 0
			for i := range min(len(pa), len(pb)) {
				if d := int(pa[i]) - int(pb[i]); d > 128 || d < -128 {
					t.Fatalf("pixel %d: %d and %d", i, pa[i], pb[i])
				} else if d != 0 {
					differ++
				}
			}
			if len(pa) != len(pb) || tc.fonts == 3 && differ > 0 || differ > len(pa)/2000 {
				t.Errorf("%d pixels of %d differ from the UTF-8 fonts' (sizes %d, %d)", differ, len(pa), len(pa), len(pb))
			}
			ta, tb := tool(t, a, "pdftotext", "-enc", "UTF-8", "-", "-"), tool(t, b, "pdftotext", "-enc", "UTF-8", "-", "-")
			if !bytes.Equal(ta, tb) {
				t.Errorf("text differs:\n%s\n%s", ta, tb)
			}
			words := strings.Join(strings.Fields(string(ta)), " ")
			for _, l := range tc.lines {
				if l = strings.Join(strings.Fields(l), " "); !strings.Contains(words, l) {
					t.Errorf("line %q not in the text", l)
				}
			}
			fonts := strings.Split(strings.TrimSpace(string(tool(t, a, "pdffonts", "-"))), "\n")[2:]
			if len(fonts) != tc.fonts {
				t.Errorf("%d fonts, want %d:\n%s", len(fonts), tc.fonts, strings.Join(fonts, "\n"))
			}
			if tc.fonts == 3 && len(a) >= len(b) {
				t.Errorf("simple fonts take %d bytes, UTF-8 fonts %d", len(a), len(b))
			}
		})
	}
}

func TestEachSplitsByFont(t *testing.T) {
	s := loadSet(t)
	pdf := fpdf.New("P", "pt", "A4", "")
	var used Runes
	var all []rune
	for r := rune(0x41); len(all) < perFont+5; r++ {
		if s.Face(0).Has(r) {
			used.Add(r)
			all = append(all, r)
		}
	}
	used.Add(' ')
	e := s.Embed(pdf, 0, &used)
	last := all[len(all)-1] // the sixth rune of the second font
	text := string(all[0]) + " " + string(last) + " " + string(all[1]) + "\u2603"
	type piece struct {
		family, text string
		advance      int
	}
	var got []piece
	e.Each(text, func(family, text string, advance int) { got = append(got, piece{family, text, advance}) })
	w := func(rs ...rune) int {
		n := 0
		for _, r := range rs {
			n += s.Face(0).Width(r)
		}
		return n
	}
	want := []piece{
		{"f0.0", "\x21\x20", w(all[0], ' ')},
		{"f0.1", "\x25\x20", w(last, ' ')},
		{"f0.0", "\x22", w(all[1])}, // U+2603 was not embedded: dropped
	}
	if len(got) != len(want) {
		t.Fatalf("pieces %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("piece %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

// TestEmbedConcurrent renders from one Set on many goroutines; run with
// -race it shows that documents share nothing they write.
func TestEmbedConcurrent(t *testing.T) {
	s := loadSet(t)
	want := drawLines(t, s, false, sample)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 2 {
				if got := drawLines(t, s, false, sample); !bytes.Equal(got, want) {
					t.Error("concurrent documents differ")
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestSubsetTagsDiffer: fonts that differ in their characters, or only in
// holding the space, are named apart.
func TestSubsetTagsDiffer(t *testing.T) {
	a, b := []rune("Note"), []rune("Nota")
	tags := map[string]bool{}
	for _, tag := range []string{subsetTag(0, false, a), subsetTag(0, true, a), subsetTag(0, false, b), subsetTag(1, false, a)} {
		if len(tag) != 6 || strings.Trim(tag, "ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" || tags[tag] {
			t.Errorf("tag %q: not six capitals, or not unique in %v", tag, tags)
		}
		tags[tag] = true
	}
}
