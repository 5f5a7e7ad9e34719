package fonts

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"flag"
	"math"
	"os"
	"testing"
)

var updateMathAlpha = flag.Bool("update-mathalpha", false, "write "+mathAlphaFile+" again from "+mathAlphaSource)

// mathAlphaSource is where Debian's fonts-dejavu-extra (2.37-6) puts the
// font MathAlpha's glyphs come from, and mathAlphaSourceSum its digest:
// another version would give another file, which is no error of the code.
const (
	mathAlphaSource    = "/usr/share/fonts/truetype/dejavu/DejaVuMathTeXGyre.ttf"
	mathAlphaSourceSum = "f9111561cce123a3b7bdbc230c671b4152265dd1ca6179bc8fac242a6dad0df1"
)

// mathAlphaLetterlike are the Basic Multilingual Plane's letters of the
// script, fraktur and double-struck alphabets, which Unicode left out of
// U+1D400-U+1D7FF (the converter writes \mathcal{L} as ℒ).
const mathAlphaLetterlike = "ℬℰℱℋℐℒℳℛℯℊℴℭℌℑℜℨℂℍℕℙℚℝℤ"

// TestMathAlphaFile checks that the embedded MathAlpha file is the subset
// of DejaVu Math TeX Gyre that buildMathAlpha makes, and with
// -update-mathalpha writes it.
func TestMathAlphaFile(t *testing.T) {
	src, err := os.ReadFile(mathAlphaSource)
	if err != nil {
		t.Skipf("no source font (apt-get install fonts-dejavu-extra): %v", err)
	}
	if sum := sha256.Sum256(src); hex.EncodeToString(sum[:]) != mathAlphaSourceSum && !*updateMathAlpha {
		t.Skipf("%s is another version than the one %s was made from", mathAlphaSource, mathAlphaFile)
	}
	got, err := buildMathAlpha(src)
	if err != nil {
		t.Fatal(err)
	}
	if *updateMathAlpha {
		if err := os.WriteFile(mathAlphaFile, got, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(src)
		t.Logf("wrote %s (%d bytes); source digest %x", mathAlphaFile, len(got), sum)
		return
	}
	want, err := files.ReadFile(mathAlphaFile)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s differs from what buildMathAlpha makes: go test -run TestMathAlphaFile -update-mathalpha", mathAlphaFile)
	}
}

// buildMathAlpha cuts DejaVu Math TeX Gyre down to the alphabets the text
// faces lack, mapping U+1D400-U+1D7FF from U+E000 up (see MathAlpha).
func buildMathAlpha(src []byte) ([]byte, error) {
	f, err := Parse("DejaVuMathTeXGyre-Alphabets", src)
	if err != nil {
		return nil, err
	}
	dir, err := readDirectory(src)
	if err != nil {
		return nil, err
	}
	adv, err := readAdvances(dir["hmtx"], f.numHMetrics, len(f.loca)-1)
	if err != nil {
		return nil, err
	}
	supp, err := supplementaryGlyphs(dir["cmap"])
	if err != nil {
		return nil, err
	}
	var used Runes
	// Script, bold script, fraktur, double-struck and bold fraktur, then
	// the double-struck digits.
	for _, span := range [][2]rune{{0x1D49C, 0x1D59F}, {0x1D7D8, 0x1D7E1}} {
		for r := span[0]; r <= span[1]; r++ {
			g, ok := supp[r]
			if !ok {
				continue // a hole the letterlike character fills
			}
			pua := r - mathAlnumFirst + mathAlnumPUA
			f.glyph[pua] = g
			f.width[pua] = uint16(math.Round(1000 / f.upem * float64(adv[g])))
			used.Add(pua)
		}
	}
	for _, r := range mathAlphaLetterlike {
		if !f.Has(r) {
			return nil, errors.New("source font lacks " + string(r))
		}
		used.Add(r)
	}
	return f.Subset(&used), nil
}

// supplementaryGlyphs reads the glyphs of the characters above the BMP
// from a cmap's format 12 subtable, which Parse leaves out.
func supplementaryGlyphs(cmap []byte) (map[rune]uint16, error) {
	be := binary.BigEndian
	out := map[rune]uint16{}
	for i := range int(be.Uint16(cmap[2:])) {
		off := int(be.Uint32(cmap[4+8*i+4:]))
		if be.Uint16(cmap[off:]) != 12 {
			continue
		}
		sub := cmap[off:]
		for g := range int(be.Uint32(sub[12:])) {
			grp := sub[16+12*g:]
			start, end, first := be.Uint32(grp), be.Uint32(grp[4:]), be.Uint32(grp[8:])
			for c := start; c <= end; c++ {
				out[rune(c)] = uint16(first + c - start)
			}
		}
		return out, nil
	}
	return nil, errors.New("no format 12 cmap subtable")
}

// TestMathAlphaCoverage checks that the MathAlpha face draws every letter
// of its alphabets, and nothing of the others.
func TestMathAlphaCoverage(t *testing.T) {
	s, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []rune{'𝒪', '𝒜', '𝓏', '𝓞', '𝔤', '𝔄', '𝕰', '𝔼', '𝕜', '𝟙', '𝟘', 'ℒ', 'ℝ', 'ℭ', 'ℊ'} {
		p, ok := s.MathAlphaRune(r)
		if !ok {
			t.Errorf("MathAlpha lacks %c (%U)", r, r)
			continue
		}
		if w := s.Face(MathAlpha).Width(p); w < 300 || w > 1500 {
			t.Errorf("%c: width %d", r, w)
		}
		if a, _, _ := s.Face(MathAlpha).Extent(p); a <= 0 {
			t.Errorf("%c: no ink above the baseline", r)
		}
	}
	for _, r := range []rune{'𝐀', '𝑥', '𝖠', '𝟎', 'A', 'x', 0xE000, 0x1D49D} {
		if _, ok := s.MathAlphaRune(r); ok {
			t.Errorf("MathAlpha draws %c (%U), which it should leave to the text faces", r, r)
		}
	}
}
