package render

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestQuoteFillFromTokens draws quotes and alerts on the ground modern.css
// gives them on Chromium, from the tokens style-themes sends for modern:
// QuoteFill from the quote's bar to its other side, QuotePadding inside it
// above the first line and below the last, and AlertPadding inside an
// alert (modern.css's 0.5em), QuotePadding when it is zero. Without those
// tokens (an older styler, basic) quotes are drawn as before, on the
// page's white. modern's quotes printed on white, their text against the
// fill's edges, and its alerts padded as its quotes.
func TestQuoteFillFromTokens(t *testing.T) {
	needTool(t, "pdftotext")
	needTool(t, "pdftoppm")
	r := newRenderer(t, `{}`)
	d := markdownDoc(t, "Lead paragraph.\n\n> Quoteword in a quote.\n\n> Alertword in an alert.\n\nTail paragraph.\n")
	// This package's test parser knows no alerts: the second quote is
	// made one as parse-goldmark's tree has it.
	alert := d.Root.Children[2]
	alert.Attrs = map[string]string{"alert": "note"}
	alert.Children = append([]*stage.Node{{Kind: stage.KindParagraph, Attrs: map[string]string{"alert_title": "true"},
		Children: []*stage.Node{{Kind: stage.KindText, Text: "Note"}}}}, alert.Children...)

	filled := modernTokens
	filled.QuoteFill, filled.QuotePadding = "#f1f5f9", 3.68
	alerts := filled
	alerts.AlertPadding = 5.25
	const dpi = 144
	ground := colour{0xf1, 0xf5, 0xf9, 2}
	right := a4(t).WidthPt - filled.Margins[1]
	var plainGap float64
	for _, tc := range []struct {
		name   string
		tokens stage.Tokens
		// pad is a quote's padding, alertPad an alert's.
		pad, alertPad float64
	}{
		{"none sent", modernTokens, 0, 0},
		{"quotes padded", filled, 3.68, 3.68},
		{"modern", alerts, 3.68, 5.25},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: d, tokens: tc.tokens, numbering: stage.NumberingNone})
			words := map[string]bboxWord{}
			for _, w := range pdfBoxes(t, resp.PDF)[0].Words {
				words[w.Text] = w
			}
			lead, quote, note, tail := words["Lead"], words["Quoteword"], words["Note"], words["Tail"]
			if lead.Text == "" || quote.Text == "" || note.Text == "" || tail.Text == "" {
				t.Fatalf("words read back: %v", words)
			}
			w, h, px := rasterRGB(t, resp.PDF, dpi)
			// Down the column just inside the quotes' far side, clear of
			// their words.
			for _, word := range []bboxWord{quote, note} {
				top, bottom := fillRunAround(w, h, px, dpi, right-2, ground, word)
				if tc.pad == 0 {
					if bottom > top {
						t.Errorf("%s: the ground drawn from %.2f to %.2f", word.Text, top, bottom)
					}
					continue
				}
				line := tc.tokens.FontSize * tc.tokens.LineHeight
				pad := tc.pad
				if word.Text == "Note" {
					pad = tc.alertPad
				}
				if top > word.Y0-pad || bottom < word.Y1+pad {
					t.Errorf("%s (%.2f-%.2f): the ground runs from %.2f to %.2f, want %.2f above and below", word.Text, word.Y0, word.Y1, top, bottom, pad)
				}
				// The alert's ground holds its title and body.
				want := line + 2*pad
				if word.Text == "Note" {
					want = 2*line + filled.ParagraphSpacing*0.4 + 2*pad
				}
				if got := bottom - top; math.Abs(got-want) > 1.5 {
					t.Errorf("%s: the ground is %.2f high, want %.2f", word.Text, got, want)
				}
			}
			// The padding is space the text makes room for.
			gap := tail.Y0 - lead.Y0
			if tc.pad == 0 {
				plainGap = gap
			} else if want := plainGap + 2*tc.pad + 2*tc.alertPad; plainGap > 0 && math.Abs(gap-want) > 1 {
				t.Errorf("the tail paragraph is %.2f below the lead, want %.2f (%.2f and four paddings)", gap, want, plainGap)
			}
		})
	}
}

// fillRunAround returns the run of c's pixels down the column at x that
// holds word's middle, 0, 0 when there is none.
func fillRunAround(w, h int, px []byte, dpi int, x float64, c colour, word bboxWord) (top, bottom float64) {
	s := float64(dpi) / 72
	col, mid := int(x*s), int((word.Y0+word.Y1)/2*s)
	if col < 0 || col >= w || mid < 0 || mid >= h {
		return 0, 0
	}
	is := func(y int) bool {
		i := 3 * (y*w + col)
		return within(px[i], c.r, c.tol) && within(px[i+1], c.g, c.tol) && within(px[i+2], c.b, c.tol)
	}
	if !is(mid) {
		return 0, 0
	}
	y0, y1 := mid, mid
	for y0 > 0 && is(y0-1) {
		y0--
	}
	for y1 < h-1 && is(y1+1) {
		y1++
	}
	return float64(y0) / s, float64(y1+1) / s
}

// TestTableStripeFromTokens shades every second body row of a table as
// modern.css's tbody tr:nth-child(even) does on Chromium, from the tokens'
// TableStripe: the second and fourth body rows, not the header or the
// others. Without it (an older styler, basic) no row is. modern's tables
// printed unstriped. An HTML table's rows are counted as a browser groups
// them: a leading row of <th> cells outside a <thead> is the first of its
// tbody, and each tbody counts from one; the rows after such a header
// were counted from the one under it, and rowone and rowthree printed
// white where Chromium shades them.
func TestTableStripeFromTokens(t *testing.T) {
	needTool(t, "pdftotext")
	needTool(t, "pdftoppm")
	r := newRenderer(t, `{}`)
	const md = "| Name | Value |\n|---|---|\n| rowone | 1 |\n| rowtwo | 2 |\n| rowthree | 3 |\n| rowfour | 4 |\n| rowfive | 5 |\n"
	striped := modernTokens
	striped.TableStripe = "#f8fafc"
	const dpi = 144
	stripe := colour{0xf8, 0xfa, 0xfc, 2}
	for _, tc := range []struct {
		name, md string
		tokens   stage.Tokens
		shaded   map[string]bool
	}{
		{"none sent", md, modernTokens, map[string]bool{}},
		{"modern", md, striped, map[string]bool{"rowtwo": true, "rowfour": true}},
		{"html header in the tbody", "<table>\n<tr><th>Name</th><th>Value</th></tr>\n<tr><td>rowone</td><td>1</td></tr>\n" +
			"<tr><td>rowtwo</td><td>2</td></tr>\n<tr><td>rowthree</td><td>3</td></tr>\n</table>\n",
			striped, map[string]bool{"rowone": true, "rowthree": true}},
		{"html thead and two tbodies", "<table>\n<thead><tr><th>Name</th><th>Value</th></tr></thead>\n" +
			"<tbody><tr><td>rowone</td><td>1</td></tr><tr><td>rowtwo</td><td>2</td></tr><tr><td>rowthree</td><td>3</td></tr></tbody>\n" +
			"<tbody><tr><td>rowfour</td><td>4</td></tr><tr><td>rowfive</td><td>5</td></tr></tbody>\n</table>\n",
			striped, map[string]bool{"rowtwo": true, "rowfive": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: markdownDoc(t, tc.md), tokens: tc.tokens, numbering: stage.NumberingNone})
			words := map[string]bboxWord{}
			for _, w := range pdfBoxes(t, resp.PDF)[0].Words {
				words[w.Text] = w
			}
			w, h, px := rasterRGB(t, resp.PDF, dpi)
			for _, name := range []string{"Name", "rowone", "rowtwo", "rowthree", "rowfour", "rowfive"} {
				word := words[name]
				if word.Text == "" {
					if !strings.Contains(tc.md, name) {
						continue
					}
					t.Fatalf("no %q among the words read back: %v", name, words)
				}
				// Beside the word and above it, inside its cell.
				area := (word.X1 - word.X0) * 3
				n := countNear(w, h, px, dpi, word.X0, word.Y0-2, word.X1, word.Y0, stripe) +
					countNear(w, h, px, dpi, word.X1+0.5, word.Y0, word.X1+2, word.Y1, stripe)
				if shaded := float64(n) > area; shaded != tc.shaded[name] {
					t.Errorf("%s: %d stripe pixels about it: shaded %v, want %v", name, n, shaded, tc.shaded[name])
				}
			}
		})
	}
}

// TestLinkPlainFromTokens draws links without an underline when the
// tokens' LinkPlain says so, as modern.css's a { text-decoration: none }
// prints them on Chromium, and underlined without it (an older styler,
// basic). modern's links printed underlined.
func TestLinkPlainFromTokens(t *testing.T) {
	needTool(t, "pdftotext")
	needTool(t, "pdftoppm")
	r := newRenderer(t, `{}`)
	// No descenders in the words: under their baseline is only the
	// underline.
	d := markdownDoc(t, "Some [linkword](https://example.com/) and <u>under <a href=\"https://example.com/\">linked</a></u> here.\n")
	plain := modernTokens
	plain.LinkPlain = true
	const dpi = 144
	white := colour{0xff, 0xff, 0xff, 40}
	for _, tc := range []struct {
		name   string
		tokens stage.Tokens
		// underlined says which words are.
		underlined map[string]bool
	}{
		{"none sent", modernTokens, map[string]bool{"linkword": true, "linked": true}},
		// An underline the link is inside stays.
		{"modern", plain, map[string]bool{"linked": true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: d, tokens: tc.tokens, numbering: stage.NumberingNone})
			words := map[string]bboxWord{}
			for _, w := range pdfBoxes(t, resp.PDF)[0].Words {
				words[w.Text] = w
			}
			w, h, px := rasterRGB(t, resp.PDF, dpi)
			for _, name := range []string{"linkword", "linked"} {
				word := words[name]
				if word.Text == "" {
					t.Fatalf("no %q among the words read back: %v", name, words)
				}
				// Between the baseline and the bottom of the word's box.
				s := float64(dpi) / 72
				y0, y1 := word.Y1-0.24*tc.tokens.FontSize+0.5, word.Y1+1
				all := (int(word.X1*s) - int(word.X0*s)) * (int(y1*s) - int(y0*s))
				n := all - countNear(w, h, px, dpi, word.X0, y0, word.X1, y1, white)
				// An underline is a line of ink as long as the word.
				if underlined := float64(n) > (word.X1-word.X0)*s*0.8; underlined != tc.underlined[name] {
					t.Errorf("%s: %d pixels of ink under it: underlined %v, want %v", name, n, underlined, tc.underlined[name])
				}
			}
		})
	}
}

// TestHeadingStylesFromTokens draws headings in the face and colour the
// tokens give their level, as the themes' CSS prints them on Chromium:
// basic's h5 bold italic and h6 italic at the text's weight, modern's h6
// in the muted colour; a raw <h6> the same, and a level that is not
// italic still italic in an italic quote. Without those tokens (an older
// styler) every heading is bold, upright, in the heading colour. fpdf drew
// basic's h5 and h6 bold upright and modern's h6 in the heading colour.
func TestHeadingStylesFromTokens(t *testing.T) {
	needTool(t, "pdftotext")
	needTool(t, "pdftoppm")
	needTool(t, "pdffonts")
	r := newRenderer(t, `{}`)
	basic := basicTokens
	basic.HeadingItalic, basic.HeadingRegular = [6]bool{4: true, 5: true}, [6]bool{5: true}
	basicQuote := basic
	basicQuote.QuoteItalic = true
	modern := modernTokens
	modern.HeadingMuted = [6]bool{5: true}
	const dpi = 144
	for _, tc := range []struct {
		name, md string
		tokens   stage.Tokens
		// face is the one font besides the body's the heading is drawn in.
		face   string
		colour string
	}{
		{"basic h5", "##### Headword\n", basic, "DejaVuSerif-BoldItalic", basic.HeadingColor},
		{"basic h6", "###### Headword\n", basic, "DejaVuSerif-Italic", basic.HeadingColor},
		{"basic html h6", "<h6>Headword</h6>\n", basic, "DejaVuSerif-Italic", basic.HeadingColor},
		{"basic quoted h3", "> ### Headword\n", basicQuote, "DejaVuSerif-BoldItalic", basic.HeadingColor},
		{"none sent h5", "##### Headword\n", basicTokens, "DejaVuSerif-Bold", basic.HeadingColor},
		{"none sent h6", "###### Headword\n", basicTokens, "DejaVuSerif-Bold", basic.HeadingColor},
		{"modern h6", "###### Headword\n", modern, "DejaVuSans-Bold", modern.MutedColor},
		{"modern h5", "##### Headword\n", modern, "DejaVuSans-Bold", modern.HeadingColor},
		{"none sent modern h6", "###### Headword\n", modernTokens, "DejaVuSans-Bold", modern.HeadingColor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: markdownDoc(t, tc.md), tokens: tc.tokens, numbering: stage.NumberingNone})
			// The body's regular face is embedded whatever the page holds.
			var faces []string
			for _, f := range pdfFonts(t, resp.PDF) {
				if face := f[0][strings.Index(f[0], "+")+1:]; face != "DejaVuSerif" && face != "DejaVuSans" {
					faces = append(faces, face)
				}
			}
			if len(faces) != 1 || faces[0] != tc.face {
				t.Errorf("drawn in %v, want %s", faces, tc.face)
			}
			var word bboxWord
			for _, w := range pdfBoxes(t, resp.PDF)[0].Words {
				if w.Text == "Headword" {
					word = w
				}
			}
			if word.Text == "" {
				t.Fatal("no Headword read back")
			}
			var c [3]byte
			if _, err := fmt.Sscanf(tc.colour, "#%02x%02x%02x", &c[0], &c[1], &c[2]); err != nil {
				t.Fatalf("colour %q: %v", tc.colour, err)
			}
			w, h, px := rasterRGB(t, resp.PDF, dpi)
			ink := countNear(w, h, px, dpi, word.X0, word.Y0, word.X1, word.Y1, colour{c[0], c[1], c[2], 24})
			if ink < 40 {
				t.Errorf("%d pixels of %s in the heading", ink, tc.colour)
			}
		})
	}
}

// TestStrikeMutedFromTokens draws struck-through text, its line too, in
// the muted colour when the tokens' StrikeMuted says so, as modern.css's
// del { color: var(--md-muted) } prints it on Chromium, from Markdown's
// ~~ and HTML's <del> alike; without it (an older styler, basic) in the
// text's colour. modern's struck text printed in the text's colour.
func TestStrikeMutedFromTokens(t *testing.T) {
	needTool(t, "pdftotext")
	needTool(t, "pdftoppm")
	r := newRenderer(t, `{}`)
	d := markdownDoc(t, "Plain ~~struckword~~ and <del>deleted</del> after.\n")
	muted := modernTokens
	muted.StrikeMuted = true
	const dpi = 144
	for _, tc := range []struct {
		name   string
		tokens stage.Tokens
		colour string
	}{
		{"none sent", modernTokens, modernTokens.TextColor},
		{"modern", muted, modernTokens.MutedColor},
	} {
		t.Run(tc.name, func(t *testing.T) {
			resp := renderPDF(t, r, req{doc: d, tokens: tc.tokens, numbering: stage.NumberingNone})
			words := map[string]bboxWord{}
			for _, w := range pdfBoxes(t, resp.PDF)[0].Words {
				words[w.Text] = w
			}
			w, h, px := rasterRGB(t, resp.PDF, dpi)
			ink := func(word bboxWord, hex string) int {
				var c [3]byte
				if _, err := fmt.Sscanf(hex, "#%02x%02x%02x", &c[0], &c[1], &c[2]); err != nil {
					t.Fatalf("colour %q: %v", hex, err)
				}
				return countNear(w, h, px, dpi, word.X0, word.Y0, word.X1, word.Y1, colour{c[0], c[1], c[2], 16})
			}
			for _, name := range []string{"Plain", "struckword", "deleted", "after."} {
				word := words[name]
				if word.Text == "" {
					t.Fatalf("no %q among the words read back: %v", name, words)
				}
				want, other := tc.colour, modernTokens.TextColor
				if name == "Plain" || name == "after." {
					want = modernTokens.TextColor
				}
				if want == other {
					other = modernTokens.MutedColor
				}
				// Text and line are of one colour: most of the word's
				// pixels are that colour; the other's are only dark
				// glyphs' anti-aliased edges.
				if got, stray := ink(word, want), ink(word, other); got < 40 || 3*stray > got {
					t.Errorf("%s: %d pixels of %s, %d of %s", name, got, want, stray, other)
				}
			}
		})
	}
}

// TestPaddedQuoteKeepsWhereItFits starts a padded quote, and an alert, at
// the foot of a page whenever its padding and first two lines fit there
// after the gap before it: room for that pad and the lines is all the
// quote keeps with. The check counted a paragraph gap more, the one
// before the quote's first block, which a quote's first block has not, so
// a quote that fitted moved to the next page early.
func TestPaddedQuoteKeepsWhereItFits(t *testing.T) {
	needTool(t, "pdftotext")
	r := newRenderer(t, `{}`)
	body := strings.Repeat("words to fill the quote over several lines ", 12)
	tokens := modernTokens
	tokens.QuoteFill, tokens.QuotePadding, tokens.AlertPadding = "#f1f5f9", 3.68, 5.25
	line := tokens.FontSize * tokens.LineHeight
	page := a4(t)
	for _, tc := range []struct {
		kind string
		// fillers leave the quote's first lines about room at the foot
		// of page 1, give or take a line.
		fillers int
	}{
		{"quote", 29},
		{"alert", 28},
	} {
		kind, fillers := tc.kind, tc.fillers
		t.Run(kind, func(t *testing.T) {
			var src strings.Builder
			for i := range fillers {
				fmt.Fprintf(&src, "Filler%d line.\n\n", i)
			}
			d := markdownDoc(t, src.String()+"> Quoteword "+body+"\n\nTail.\n")
			pad, lead := tokens.QuotePadding, 0.0
			if kind == "alert" {
				quote := d.Root.Children[fillers]
				quote.Attrs = map[string]string{"alert": "note"}
				quote.Children = append([]*stage.Node{{Kind: stage.KindParagraph, Attrs: map[string]string{"alert_title": "true"},
					Children: []*stage.Node{{Kind: stage.KindText, Text: "Note"}}}}, quote.Children...)
				// The title, and the gap under it, keep with the lines.
				pad, lead = tokens.AlertPadding, line+tokens.ParagraphSpacing*0.4
			}
			// The top margin moves the foot of the filler down the page
			// by less than a line at a time.
			var kept, moved int
			for top := 50.0; top < 50+line+tokens.ParagraphSpacing; top += 1 {
				tk := tokens
				tk.Margins[0] = top
				pages := pdfBoxes(t, renderPDF(t, r, req{doc: d, tokens: tk, numbering: stage.NumberingNone}).PDF)
				first := pages[0].Words[0]
				// Where a line's words start below the line's top.
				inset := first.Y0 - top
				var last, quote bboxWord
				quotePage := -1
				for i, p := range pages {
					for _, w := range p.Words {
						if i == 0 && strings.HasPrefix(w.Text, "Filler") {
							last = w
						}
						if w.Text == "Quoteword" {
							quote, quotePage = w, i
						}
					}
				}
				if last.Text != fmt.Sprintf("Filler%d", fillers-1) || quotePage < 0 {
					continue // the filler itself crossed the page
				}
				if quotePage == 0 {
					kept++
				} else {
					moved++
				}
				bottom := page.HeightPt - tk.Margins[2]
				need := last.Y0 - inset + line + tokens.ParagraphSpacing + pad + lead + 2*line
				switch {
				case quotePage == 1 && need < bottom-0.5:
					t.Errorf("top margin %g: the %s moved to the next page with %.2f pt free, %.2f needed", top, kind, bottom-(last.Y0-inset+line), need-(last.Y0-inset+line))
				case quotePage == 0 && quote.Y0-inset+2*line > bottom+0.5:
					t.Errorf("top margin %g: the %s's second line ends at %.2f, below the foot %.2f", top, kind, quote.Y0-inset+2*line, bottom)
				}
			}
			// The sweep crosses the point where the quote stops fitting.
			if kept == 0 || moved == 0 {
				t.Errorf("the %s stayed on page 1 %d times and moved %d times", kind, kept, moved)
			}
		})
	}
}
