package fonts

import (
	"encoding/binary"
	"os"
	"strings"
	"testing"
	"time"
)

// Debian's fonts-droid-fallback (Chinese, Japanese; no Hangul) and
// fonts-nanum (Korean), which CI installs.
const (
	droidFallback = "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"
	nanumGothic   = "/usr/share/fonts/truetype/nanum/NanumGothic.ttf"
	// nanumGothicBold is fonts-nanum's bold face of NanumGothic.
	nanumGothicBold = "/usr/share/fonts/truetype/nanum/NanumGothicBold.ttf"
)

const cjk = "中文段落。日本語のテキスト、カタカナ。한국어 문단입니다."

func systemFonts(t testing.TB) []FontFile {
	t.Helper()
	var out []FontFile
	for _, path := range []string{droidFallback, nanumGothic} {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Skipf("no fallback font (apt-get install fonts-droid-fallback fonts-nanum): %v", err)
		}
		out = append(out, FontFile{Name: path, Data: data})
	}
	return out
}

// TestFallbackSubset parses fallback fonts once and checks that a
// per-document copy of CJK text holds those glyphs, as the DejaVu copies
// do, with the same outlines and metrics as the full font.
func TestFallbackSubset(t *testing.T) {
	files := systemFonts(t)
	base := loadSet(t)
	start := time.Now()
	set, err := base.WithFallbacks(files...)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("parsed %d fonts in %v", len(files), time.Since(start))
	if got := set.Fallbacks(); len(got) != 2 || got[0] != Count || got[1] != Count+1 {
		t.Fatalf("Fallbacks() = %v", got)
	}
	if base.Fallbacks() != nil || base.Face(Count) != nil {
		t.Fatal("WithFallbacks changed the set it copies")
	}
	droid, nanum := set.Face(Count), set.Face(Count+1)
	if droid.Name != "DroidSansFallbackFull" || nanum.Name != "NanumGothic" {
		t.Errorf("names %q, %q", droid.Name, nanum.Name)
	}
	// Droid maps its Hangul in format 12 only, and not every syllable.
	if !droid.Has('中') || !droid.Has('の') || !nanum.Has('한') {
		t.Fatal("CJK characters missing from the fonts")
	}
	for _, f := range []*Face{droid, nanum} {
		used := &Runes{}
		for _, r := range cjk {
			if f.Has(r) {
				used.Add(r)
			}
		}
		s, err := Parse(f.Name, f.Subset(used))
		if err != nil {
			t.Fatalf("%s: copy does not parse: %v", f.Name, err)
		}
		// Droid builds some ideographs from parts: those come along.
		if n, kept := int(binary.BigEndian.Uint16(s.maxp[4:])), len(f.closure(used)); n != kept || n > 2*used.Len()+1 {
			t.Errorf("%s: copy has %d glyphs for %d runes, %d kept", f.Name, n, used.Len(), kept)
		}
		used.Each(func(r rune) {
			if !s.Has(r) || s.Width(r) != f.Width(r) {
				t.Errorf("%s: %q in copy %v, width %d of %d", f.Name, r, s.Has(r), s.Width(r), f.Width(r))
			}
			if err := sameGlyph(f, f.glyph[r], s, s.glyph[r]); err != nil {
				t.Errorf("%s: %q: %v", f.Name, r, err)
			}
		})
	}
}

// TestFallbackRefused checks that a file that cannot be a fallback is an
// error naming it and saying why.
func TestFallbackRefused(t *testing.T) {
	set := loadSet(t)
	ttf, err := File(0)
	if err != nil {
		t.Fatal(err)
	}
	otf := append([]byte("OTTO"), ttf[4:]...)
	ttc := append([]byte("ttcf"), ttf[4:]...)
	noGlyf := append([]byte(nil), ttf...)
	n := int(binary.BigEndian.Uint16(noGlyf[4:]))
	for i := range n {
		if rec := noGlyf[12+16*i:]; string(rec[:4]) == "glyf" {
			copy(rec, "gly_")
		}
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"/fonts/a.otf", otf, "CFF outlines"},
		{"/fonts/b.ttc", ttc, "font collection"},
		{"/fonts/c.ttf", noGlyf, `missing "glyf" table`},
		{"/fonts/d.ttf", []byte("hello"), "not a font"},
		{"/fonts/e.ttf", nil, "not a font"},
	} {
		_, err := set.WithFallbacks(FontFile{Name: "/fonts/ok.ttf", Data: ttf}, FontFile{Name: tc.name, Data: tc.data})
		if err == nil || !strings.Contains(err.Error(), tc.name+": ") || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming it and containing %q", tc.name, err, tc.want)
		}
	}
	// A bold face that is not a usable font is named alike.
	_, err = set.WithFallbacks(FontFile{Name: "/fonts/ok.ttf", Data: ttf, Bold: &FontFile{Name: "/fonts/ok-bold.otf", Data: otf}})
	if err == nil || !strings.Contains(err.Error(), "/fonts/ok-bold.otf: ") {
		t.Errorf("bold face: error %v, want one naming it", err)
	}
	if _, err := set.WithFallbacks(make([]FontFile, MaxFallbacks+1)...); err == nil {
		t.Error("more than MaxFallbacks fonts accepted")
	}
}

// TestFallbackBold: a fallback font given with its bold face has that
// face as BoldOf, taken as bold (so that it is not emboldened again),
// after the fallbacks' IDs; one without has none, and the bold face is no
// fallback of its own.
func TestFallbackBold(t *testing.T) {
	files := systemFonts(t)
	data, err := os.ReadFile(nanumGothicBold)
	if err != nil {
		t.Skipf("no %s: %v", nanumGothicBold, err)
	}
	files[1].Bold = &FontFile{Name: nanumGothicBold, Data: data}
	set, err := loadSet(t).WithFallbacks(files...)
	if err != nil {
		t.Fatal(err)
	}
	if got := set.Fallbacks(); len(got) != 2 {
		t.Fatalf("Fallbacks() = %v", got)
	}
	if _, ok := set.BoldOf(Count); ok {
		t.Error("Droid has a bold face")
	}
	b, ok := set.BoldOf(Count + 1)
	if !ok || b != Count+MaxFallbacks+1 || set.Face(b) == nil || !set.Face(b).Bold || set.Face(b).Name != "NanumGothicBold" {
		t.Fatalf("BoldOf(NanumGothic) = %d, %v", b, ok)
	}
	if !set.Face(b).Has('한') || set.Face(b).Width('한') == 0 {
		t.Error("the bold face lacks Hangul")
	}
	if _, ok := set.BoldOf(Of(Sans, Regular)); ok {
		t.Error("a DejaVu face has a fallback bold face")
	}
}

func TestFontName(t *testing.T) {
	for in, want := range map[string]string{
		"/usr/share/fonts/DroidSansFallbackFull.ttf": "DroidSansFallbackFull",
		"/x/My Font (Bold).ttf":                      "MyFontBold",
		"/x/字体.ttf":                                  "Fallback",
	} {
		if got := fontName(in); got != want {
			t.Errorf("fontName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestFallbackNamesDiffer: fpdf keys font programs by name, so two files
// called alike must not share one.
func TestFallbackNamesDiffer(t *testing.T) {
	ttf, err := File(0)
	if err != nil {
		t.Fatal(err)
	}
	set, err := loadSet(t).WithFallbacks(FontFile{Name: "/a/X.ttf", Data: ttf}, FontFile{Name: "/b/X.ttf", Data: ttf}, FontFile{Name: "/c/DejaVuSans.ttf", Data: ttf})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for id := ID(0); id < MaxFaces; id++ {
		if f := set.Face(id); f != nil {
			if seen[f.Name] {
				t.Errorf("two faces named %s", f.Name)
			}
			seen[f.Name] = true
		}
	}
}

// TestFaceStyle: a face says whether it is bold or italic (the head
// table's macStyle), so that the painter synthesizes only the styles a
// fallback font lacks: the DejaVu faces say what their IDs say, the
// system fallbacks are regular.
func TestFaceStyle(t *testing.T) {
	set := loadSet(t)
	for id := ID(0); id < Count; id++ {
		f := set.Face(id)
		if f.Bold != (id.Style()&Bold != 0) || f.Italic != (id.Style()&Italic != 0) {
			t.Errorf("%s: bold %v, italic %v", f.Name, f.Bold, f.Italic)
		}
	}
	fb, err := set.WithFallbacks(systemFonts(t)...)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range fb.Fallbacks() {
		if f := fb.Face(id); f.Bold || f.Italic {
			t.Errorf("%s: bold %v, italic %v", f.Name, f.Bold, f.Italic)
		}
	}
}
