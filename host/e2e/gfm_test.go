package e2e

import (
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// gfmSample has one of each GitHub Flavored Markdown feature the contract
// names (table, task list, strikethrough, autolink, footnote), raw inline
// HTML and a <style> block. Its words are unique, so each can be found on
// the page by pdftotext -bbox.
const gfmSample = "# Colourful heading\n\n" +
	"| Fruit | Price |\n|:------|------:|\n| Apple | 1.25 |\n| Cherry | 19.75 |\n\n" +
	"- [x] Finished chore\n- [ ] Pending chore\n\n" +
	"Plain words then ~~struckword~~ and more plain words.\n\n" +
	"Visit https://example.org/autolinked today.\n\n" +
	"A claim with a footnote.[^proof]\n\n" +
	"Some <b>boldhtml</b> and <span style=\"color:#ff0000\">redspan</span> here.\n\n" +
	"<style>h1 { color: #ff0000; }</style>\n\n" +
	"[^proof]: Footnote body sentence.\n"

// TestGFMOnEveryBackend converts a document with each GFM feature through
// the whole service (parse-goldmark, style-themes, the render backend) and
// reads the PDF back as a reader would: the Markdown syntax is gone and
// each feature shows as itself. On Chromium the document's <style> wins
// over the theme; fpdf reads no CSS, and neither prints the style sheet.
func TestGFMOnEveryBackend(t *testing.T) {
	pdfcheck.Require(t)
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			_, key := h.account("pro", -1)
			resp, pdf := h.post(key, map[string]string{"markdown": gfmSample, "pageNumeration": "none"})
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
			}
			text := pdfcheck.Text(t, pdf)
			flat := strings.Join(strings.Fields(text), " ")
			// No Markdown or HTML syntax reaches the page.
			for _, raw := range []string{"|", "---", "[x]", "[ ]", "~~", "[^proof]", "<b>", "<span", "<style", "h1 {", "color:"} {
				if strings.Contains(text, raw) {
					t.Errorf("the PDF shows the source text %q: a feature was not parsed\n%s", raw, text)
				}
			}
			for _, want := range []string{"Colourful heading", "Finished chore", "Pending chore", "struckword", "https://example.org/autolinked", "boldhtml", "redspan", "Footnote body sentence."} {
				if !strings.Contains(flat, want) {
					t.Errorf("the PDF lacks %q\n%s", want, text)
				}
			}
			words := pdfcheck.Words(t, pdf)
			word := func(t *testing.T, s string) pdfcheck.Word {
				t.Helper()
				for _, w := range words {
					if w.Text == s {
						return w
					}
				}
				t.Fatalf("no word %q on the page\n%s", s, text)
				return pdfcheck.Word{}
			}

			t.Run("table", func(t *testing.T) {
				// Cells of a row share a line; the first column is
				// aligned left, the second (:--:|--:) right.
				fruit, price := word(t, "Fruit"), word(t, "Price")
				apple, cheap := word(t, "Apple"), word(t, "1.25")
				cherry, dear := word(t, "Cherry"), word(t, "19.75")
				for _, row := range [][2]pdfcheck.Word{{fruit, price}, {apple, cheap}, {cherry, dear}} {
					if math.Abs(row[0].YMin-row[1].YMin) > 2 || row[1].XMin <= row[0].XMax {
						t.Errorf("%q and %q are not cells of one row: %+v %+v", row[0].Text, row[1].Text, row[0], row[1])
					}
				}
				if math.Abs(fruit.XMin-apple.XMin) > 2 || math.Abs(apple.XMin-cherry.XMin) > 2 {
					t.Errorf("first column not aligned left: x %.1f, %.1f, %.1f", fruit.XMin, apple.XMin, cherry.XMin)
				}
				if math.Abs(price.XMax-cheap.XMax) > 2 || math.Abs(cheap.XMax-dear.XMax) > 2 {
					t.Errorf("second column not aligned right: right edges %.1f, %.1f, %.1f", price.XMax, cheap.XMax, dear.XMax)
				}
			})

			t.Run("footnote", func(t *testing.T) {
				// The reference is a raised "1" after the claim, the note
				// a numbered line below it.
				claim := word(t, "footnote.")
				var ref *pdfcheck.Word
				for i, w := range words {
					if w.Text == "1" && math.Abs(w.XMin-claim.XMax) < 2 && math.Abs(w.YMin-claim.YMin) < claim.YMax-claim.YMin {
						ref = &words[i]
					}
				}
				if ref == nil {
					t.Fatalf("no reference 1 right after %q\n%s", claim.Text, text)
				}
				if ref.YMax >= claim.YMax-1 || ref.YMax-ref.YMin >= claim.YMax-claim.YMin {
					t.Errorf("the reference 1 is not raised and smaller: %+v beside %+v", *ref, claim)
				}
				if !strings.Contains(flat, "1. Footnote body sentence.") {
					t.Errorf("the footnote is not numbered 1\n%s", text)
				}
				if note := word(t, "Footnote"); note.YMin <= claim.YMax {
					t.Errorf("the footnote (y %.1f) is not below its reference (y %.1f)", note.YMin, claim.YMax)
				}
			})

			t.Run("autolink", func(t *testing.T) {
				if urls := linkAnnotations(t, pdf); !strings.Contains(urls, "https://example.org/autolinked") {
					t.Errorf("the bare URL is not a link; pdfinfo -url:\n%s", urls)
				}
			})

			dpi := 144
			w, hgt, pix := pdfcheck.PPM(t, pdf, 1, dpi)
			img := raster{w: w, h: hgt, pix: pix, scale: float64(dpi) / 72}

			t.Run("strikethrough", func(t *testing.T) {
				// A line crosses the struck word from end to end; the
				// plain word beside it has gaps between its letters.
				struck, plain := img.longestDarkRun(word(t, "struckword")), img.longestDarkRun(word(t, "Plain"))
				t.Logf("longest dark run across the word: struck %.2f, plain %.2f", struck, plain)
				if struck < 0.9 || plain > 0.6 {
					t.Errorf("no line through the struck word: dark runs cover %.0f%% of it (%.0f%% of a plain word)", struck*100, plain*100)
				}
			})

			t.Run("task list", func(t *testing.T) {
				// Each item has a box before it, and the checked box
				// differs from the open one.
				done, open := img.left(word(t, "Finished")), img.left(word(t, "Pending"))
				t.Logf("dark pixels before the items: checked %d, open %d", done, open)
				if done == 0 || open == 0 {
					t.Errorf("no checkbox drawn before the items (dark pixels: checked %d, open %d)", done, open)
				}
				if done == open {
					t.Errorf("the checked and the open box look alike (%d dark pixels each)", done)
				}
			})

			t.Run("colour", func(t *testing.T) {
				// span style=color is honoured by both backends; the
				// <style> block only by the one that reads CSS.
				if n := img.red(word(t, "redspan")); n == 0 {
					t.Errorf("the span with style=color:#ff0000 has no red pixels")
				}
				heading := img.red(word(t, "Colourful"))
				switch backend {
				case "chrome":
					if heading == 0 {
						t.Errorf("the document's <style> h1 { color: #ff0000 } did not win over the theme: no red in the heading")
					}
				default:
					if heading != 0 {
						t.Errorf("%s reads no CSS, yet the heading has %d red pixels", backend, heading)
					}
				}
			})
		})
	}
}

// linkAnnotations lists the URLs of the PDF's link annotations.
func linkAnnotations(t *testing.T, pdf []byte) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdfinfo", "-url", path).CombinedOutput()
	if err != nil {
		t.Fatalf("pdfinfo -url: %v\n%s", err, out)
	}
	return string(out)
}

// raster is one page as RGB, with the points-to-pixels scale.
type raster struct {
	w, h  int
	pix   []byte
	scale float64
}

func (r raster) at(x, y int) (byte, byte, byte) {
	if x < 0 || y < 0 || x >= r.w || y >= r.h {
		return 255, 255, 255
	}
	i := 3 * (y*r.w + x)
	return r.pix[i], r.pix[i+1], r.pix[i+2]
}

func dark(r, g, b byte) bool { return int(r)+int(g)+int(b) < 3*128 }

// box is a word's box in pixels.
func (r raster) box(w pdfcheck.Word) (x0, y0, x1, y1 int) {
	return int(w.XMin * r.scale), int(w.YMin * r.scale), int(math.Ceil(w.XMax * r.scale)), int(math.Ceil(w.YMax * r.scale))
}

// longestDarkRun is, over the rows of the middle of a word's box, the
// longest horizontal run of dark pixels, as a share of the box's width.
func (r raster) longestDarkRun(w pdfcheck.Word) float64 {
	x0, y0, x1, y1 := r.box(w)
	best := 0
	for y := y0 + (y1-y0)/4; y <= y1-(y1-y0)/4; y++ {
		run := 0
		for x := x0; x < x1; x++ {
			if dark(r.at(x, y)) {
				run++
				best = max(best, run)
			} else {
				run = 0
			}
		}
	}
	return float64(best) / float64(x1-x0)
}

// left counts the dark pixels in the space of two line heights before a
// word, on its line: where a list item's marker or checkbox sits.
func (r raster) left(w pdfcheck.Word) int {
	x0, y0, _, y1 := r.box(w)
	n := 0
	for y := y0; y < y1; y++ {
		for x := x0 - 2*(y1-y0); x < x0-1; x++ {
			if dark(r.at(x, y)) {
				n++
			}
		}
	}
	return n
}

// red counts the clearly red pixels in a word's box.
func (r raster) red(w pdfcheck.Word) int {
	x0, y0, x1, y1 := r.box(w)
	n := 0
	for y := y0; y < y1; y++ {
		for x := x0; x < x1; x++ {
			if cr, cg, cb := r.at(x, y); cr > 180 && cg < 90 && cb < 90 {
				n++
			}
		}
	}
	return n
}
