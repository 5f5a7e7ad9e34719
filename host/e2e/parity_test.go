package e2e

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// parityDocs are the documents both backends must print the same words
// of: a sampler of every GFM construct and of raw HTML inside and outside
// render-fpdf's subset, the sample corpus, and the parser's test
// documents. render-fpdf's scripts.md is not among them: the scripts it
// documents as out of its reach (Indic, Thai) and the order
// pdftotext reads right-to-left runs in differ by design.
var parityDocs = []string{
	"testdata/parity.md",
	filepath.Join(corpusDir, "small.md"),
	filepath.Join(corpusDir, "medium.md"),
	filepath.Join(corpusDir, "large.md"),
	filepath.Join(corpusDir, "gfm.md"),
	"../../plugins/parse-goldmark/markdown/testdata/gfm.md",
	"../../plugins/parse-goldmark/markdown/testdata/inlines.md",
	"../../plugins/parse-goldmark/markdown/testdata/blocks.md",
	"../../plugins/parse-goldmark/markdown/testdata/rawhtml.md",
	"../../plugins/parse-goldmark/markdown/testdata/alerts.md",
}

// TestBackendParity renders each document with render-chrome and with
// render-fpdf and requires the same text, read back with pdftotext in
// drawing order. Pages are A0, so that neither backend breaks a table
// across pages (each repeats its header row there, at places of its own)
// and the text compares as one stream. What differs by design is
// normalized away: spacing and line breaks, hyphens a line broke at,
// compatibility forms (NFKC: ligatures, Arabic presentation forms), list
// bullets, and a character render-fpdf has no font for (U+FFFD against
// any one character).
func TestBackendParity(t *testing.T) {
	pdfcheck.Require(t)
	if !chromiumAvailable() {
		t.Skip("chromium not installed: nothing to compare render-fpdf with")
	}
	if _, err := exec.LookPath("pdftotext"); err != nil {
		t.Skip("no pdftotext")
	}
	docs := map[string]string{}
	for _, path := range parityDocs {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("parity document: %v", err)
		}
		// Math extracts differently by design (Chromium's glyphs in
		// drawing order, render-fpdf's TeX as ActualText;
		// TestMathOnEveryBackend and TestMathParity compare the
		// formulas): escaped dollars keep it text on both.
		docs[path] = strings.ReplaceAll(string(b), "$", `\$`)
	}
	texts := map[string]map[string]string{}
	for _, backend := range []string{"chrome", "fpdf"} {
		h := startHost(t, withArgs("--backend", backend))
		_, key := h.account("pro", -1)
		texts[backend] = map[string]string{}
		for _, path := range parityDocs {
			resp, pdf := h.post(key, map[string]string{"markdown": docs[path], "pageNumeration": "none", "pageSize": "A0"})
			if resp.StatusCode != 200 {
				t.Fatalf("%s on %s: status %d: %.300s", path, backend, resp.StatusCode, pdf)
			}
			texts[backend][path] = rawText(t, pdf)
		}
		h.stop()
	}
	for _, path := range parityDocs {
		t.Run(strings.TrimPrefix(filepath.ToSlash(path), "../../"), func(t *testing.T) {
			if d := firstDifference(parityChars(texts["chrome"][path]), parityChars(texts["fpdf"][path])); d != "" {
				t.Errorf("the backends print different text:\n%s", d)
			}
		})
	}
}

// rawText is pdftotext's text in drawing order.
func rawText(t *testing.T, pdf []byte) string {
	t.Helper()
	cmd := exec.Command("pdftotext", "-raw", "-enc", "UTF-8", "-", "-")
	cmd.Stdin = strings.NewReader(string(pdf))
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("pdftotext: %v", err)
	}
	return string(out)
}

// parityIgnored are characters whose presence depends on layout, not on
// the words: hyphens (one backend breaks a line at a word's hyphen, the
// other does not, and pdftotext drops one at a line's end), soft hyphens,
// the bidi marks pdftotext wraps right-to-left runs in, variation
// selectors, and list bullets.
var parityIgnored = map[rune]bool{
	'-': true, '\u2010': true, '\u00ad': true, '\u202a': true, '\u202b': true, '\u202c': true,
	'\u200e': true, '\u200f': true, '\ufe0e': true, '\ufe0f': true, '•': true, '◦': true, '▪': true,
}

// parityChars is text without white space or parityIgnored, NFKC-normalized.
func parityChars(s string) []rune {
	var out []rune
	for _, r := range norm.NFKC.String(s) {
		if !unicode.IsSpace(r) && !parityIgnored[r] {
			out = append(out, r)
		}
	}
	return out
}

// firstDifference describes where chrome's and fpdf's characters first
// part, with the text before and after it, or is "" when they agree. A
// U+FFFD of fpdf's stands for any one character of chrome's.
func firstDifference(chrome, fpdf []rune) string {
	i := 0
	for ; i < len(chrome) && i < len(fpdf); i++ {
		if chrome[i] != fpdf[i] && fpdf[i] != '\ufffd' {
			break
		}
	}
	if i == len(chrome) && i == len(fpdf) {
		return ""
	}
	around := func(r []rune) string {
		return "..." + string(r[max(i-60, 0):i]) + " >>> " + string(r[i:min(i+60, len(r))])
	}
	return "chrome: " + around(chrome) + "\nfpdf:   " + around(fpdf)
}
