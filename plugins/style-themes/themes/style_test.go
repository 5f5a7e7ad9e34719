package themes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/sdk/stage"
)

const userCSS = "h1 { color: red; }"

// body is a fragment as the parser emits it, with a user style block in
// the middle.
const body = "<h1 id=\"t\">Title</h1>\n<style>\n" + userCSS + "\n</style>\n<p>Some <em>text</em>.</p>\n<style media=\"print\">p { margin: 0 }</style>\n"

func a4(t testing.TB) stage.PageSize {
	t.Helper()
	p, ok := papers.Lookup("A4")
	if !ok {
		t.Fatal("no A4")
	}
	return p
}

func style(t *testing.T, s *Styler, req *stage.StyleRequest) string {
	t.Helper()
	res, err := s.Style(t.Context(), req)
	if err != nil {
		t.Fatalf("Style: %v", err)
	}
	return res.HTML
}

// TestStyleMatrix builds every theme with every numbering, with and
// without a watermark, and checks the document's parts and their order,
// and that a watermark changes nothing (the renderer draws it).
func TestStyleMatrix(t *testing.T) {
	s := New(nil)
	numberings := []stage.Numbering{stage.NumberingNone, stage.NumberingLeft, stage.NumberingCenter, stage.NumberingRight}
	for _, theme := range []string{"modern", "basic"} {
		for _, num := range numberings {
			for _, wm := range []string{"", "FREE PLAN"} {
				t.Run(fmt.Sprintf("%s/%s/watermark=%v", theme, num, wm != ""), func(t *testing.T) {
					doc := style(t, s, &stage.StyleRequest{
						Document:  stage.Document{HTML: body, Title: "Title"},
						Theme:     theme,
						Page:      a4(t),
						Numbering: num,
						Watermark: wm,
					})
					for _, want := range []string{"<!DOCTYPE html>", `<meta charset="utf-8">`, "<title>Title</title>", `<body class="mdpress theme-` + theme + `">`} {
						if !strings.Contains(doc, want) {
							t.Errorf("document lacks %q", want)
						}
					}
					inOrder(t, doc,
						`<meta charset="utf-8">`,
						`<style id="mdpress-theme">`, "@layer mdpress-theme {", "--md-text:", "font-family: var(--md-font-body)",
						`<style id="mdpress-page">`, "@page {", "size: 595.28pt 841.89pt;",
						"<style>\n"+userCSS, `<style media="print">p { margin: 0 }</style>`,
						"</head>", "<body", `<main class="markdown-body">`, `<h1 id="t">Title</h1>`, "<p>Some <em>text</em>.</p>", "</main>",
					)
					boxes := regexp.MustCompile(`@bottom-(left|center|right) \{\s*content: counter\(page\);`).FindAllStringSubmatch(doc, -1)
					switch {
					case num == stage.NumberingNone && len(boxes) != 0:
						t.Errorf("numbering none wrote %d margin boxes", len(boxes))
					case num != stage.NumberingNone && (len(boxes) != 1 || boxes[0][1] != string(num)):
						t.Errorf("numbering %s wrote margin boxes %v", num, boxes)
					}
					if wm != "" {
						// The renderer draws the mark; the HTML is the
						// same as without one.
						plain := style(t, s, &stage.StyleRequest{
							Document: stage.Document{HTML: body, Title: "Title"}, Theme: theme, Page: a4(t), Numbering: num,
						})
						if doc != plain || strings.Contains(doc, wm) {
							t.Error("a watermark changed the HTML: the styler draws none, the renderer does")
						}
					}
					if b := doc[strings.Index(doc, "<body"):]; strings.Contains(b, "<style") {
						t.Error("a <style> element stayed in the body")
					}
				})
			}
		}
	}
}

// inOrder fails unless every part occurs in doc after the previous one.
func inOrder(t *testing.T, doc string, parts ...string) {
	t.Helper()
	at := 0
	for _, p := range parts {
		i := strings.Index(doc[at:], p)
		if i < 0 {
			if strings.Contains(doc, p) {
				t.Errorf("%q is out of order (expected after offset %d)", p, at)
			} else {
				t.Errorf("document lacks %q", p)
			}
			return
		}
		at += i + len(p)
	}
}

// TestUserStyleWins checks the cascade that lets a user's h1 colour beat
// the theme's: the theme's rules live in a cascade layer and the user's
// unlayered rule comes after every theme and page rule.
func TestUserStyleWins(t *testing.T) {
	for _, theme := range []string{"modern", "basic"} {
		t.Run(theme, func(t *testing.T) {
			doc := style(t, New(nil), &stage.StyleRequest{Document: stage.Document{HTML: body}, Theme: theme, Page: a4(t), Numbering: stage.NumberingCenter, Watermark: "x"})
			head := doc[:strings.Index(doc, "</head>")]
			themeH1 := strings.LastIndex(head, "color: var(--md-h1-color)")
			layerOpen := strings.Index(head, "@layer mdpress-theme {")
			layerClose := strings.Index(head, "\n}\n</style>")
			user := strings.Index(head, userCSS)
			if themeH1 < 0 || layerOpen < 0 || user < 0 {
				t.Fatalf("missing parts: theme h1 %d, layer %d, user %d", themeH1, layerOpen, user)
			}
			if !(layerOpen < themeH1 && themeH1 < layerClose) {
				t.Error("the theme's heading colour is not inside the theme layer")
			}
			if !(user > layerClose && user > strings.Index(head, "@page")) {
				t.Error("the user's style does not come after the theme and page CSS")
			}
			if strings.Contains(head[user:], "@layer") {
				t.Error("the user's style was put into a layer")
			}
		})
	}
}

// TestTitleEscapedWatermarkAbsent: the title is escaped, and the
// watermark, which the renderer draws, does not reach the document.
func TestTitleEscapedWatermarkAbsent(t *testing.T) {
	hostile := `</title><script>alert(1)</script><!--`
	doc := style(t, New(nil), &stage.StyleRequest{
		Document:  stage.Document{HTML: "<p>x</p>", Title: hostile},
		Theme:     "modern",
		Page:      a4(t),
		Watermark: `<b onload="x">"mark"</b>`,
	})
	if !strings.Contains(doc, "<title>&lt;/title&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;!--</title>") {
		t.Errorf("title not escaped:\n%s", doc[:strings.Index(doc, "<style")])
	}
	if strings.Contains(doc, "<script>") || strings.Contains(doc, "<b onload") {
		t.Error("raw markup from the title or watermark reached the document")
	}
	if strings.Contains(doc, "onload") {
		t.Error("the watermark text reached the document")
	}
}

// TestPageSizes checks every page size of the public contract: explicit
// points in @page (Ledger stays landscape), margins equal to the tokens,
// and a text area that keeps most of the page even on A9.
func TestPageSizes(t *testing.T) {
	s := New(nil)
	sizeRe := regexp.MustCompile(`size: ([0-9.]+)pt ([0-9.]+)pt;\n  margin: ([0-9.]+)pt ([0-9.]+)pt ([0-9.]+)pt ([0-9.]+)pt;`)
	pages := papers.All()
	if len(pages) != 22 {
		t.Fatalf("%d page sizes, the contract has 22", len(pages))
	}
	for _, theme := range []string{"modern", "basic"} {
		for _, page := range pages {
			t.Run(theme+"/"+page.Name, func(t *testing.T) {
				res, err := s.Style(t.Context(), &stage.StyleRequest{Document: stage.Document{HTML: "<p>x</p>"}, Theme: theme, Page: page, Numbering: stage.NumberingCenter})
				if err != nil {
					t.Fatal(err)
				}
				m := sizeRe.FindStringSubmatch(res.HTML)
				if m == nil {
					t.Fatal("no @page size and margin")
				}
				v := make([]float64, 6)
				for i := range v {
					v[i], _ = strconv.ParseFloat(m[i+1], 64)
				}
				if abs(v[0]-page.WidthPt) > 0.006 || abs(v[1]-page.HeightPt) > 0.006 {
					t.Errorf("size %gx%g pt, want %.3fx%.3f", v[0], v[1], page.WidthPt, page.HeightPt)
				}
				if got := [4]float64{v[2], v[3], v[4], v[5]}; got != res.Tokens.Margins {
					t.Errorf("CSS margins %v, tokens %v", got, res.Tokens.Margins)
				}
				w, h := page.WidthPt-v[3]-v[5], page.HeightPt-v[2]-v[4]
				if w < 0.6*page.WidthPt || h < 0.6*page.HeightPt {
					t.Errorf("text area %.1fx%.1f pt of a %.1fx%.1f page", w, h, page.WidthPt, page.HeightPt)
				}
			})
		}
	}
	res, err := s.Style(t.Context(), &stage.StyleRequest{Theme: "modern", Page: mustPage(t, "Ledger")})
	if err != nil || !strings.Contains(res.HTML, "size: 1224pt 792pt;") {
		t.Errorf("Ledger is not landscape: %v", err)
	}
}

func mustPage(t testing.TB, name string) stage.PageSize {
	t.Helper()
	p, ok := papers.Lookup(name)
	if !ok {
		t.Fatalf("no page %s", name)
	}
	return p
}

func abs(v float64) float64 {
	if v < 0 {
		return -v
	}
	return v
}

func TestSmallPagesScaleDown(t *testing.T) {
	s := New(nil)
	for _, theme := range []string{"modern", "basic"} {
		a4t, _ := s.Tokens(theme, mustPage(t, "A4"))
		a6t, _ := s.Tokens(theme, mustPage(t, "A6"))
		a9t, _ := s.Tokens(theme, mustPage(t, "A9"))
		a0t, _ := s.Tokens(theme, mustPage(t, "A0"))
		if a6t.FontSize != a4t.FontSize || a0t.FontSize != a4t.FontSize {
			t.Errorf("%s: type changed between A6 (%g), A4 (%g) and A0 (%g)", theme, a6t.FontSize, a4t.FontSize, a0t.FontSize)
		}
		if a9t.FontSize >= a4t.FontSize || a9t.FontSize < 0.6*a4t.FontSize-0.01 {
			t.Errorf("%s: A9 font %g for A4 %g, want 60%%..100%%", theme, a9t.FontSize, a4t.FontSize)
		}
		if a9t.Margins[0] >= a4t.Margins[0] || a0t.Margins != a4t.Margins {
			t.Errorf("%s: margins A9 %v, A4 %v, A0 %v", theme, a9t.Margins, a4t.Margins, a0t.Margins)
		}
	}
}

func TestStyleErrors(t *testing.T) {
	s := New(nil)
	tests := []struct {
		name string
		req  stage.StyleRequest
		want string
	}{
		{"unknown theme", stage.StyleRequest{Theme: "fancy", Page: a4(t)}, `unknown theme "fancy"; known: basic, modern`},
		{"empty theme", stage.StyleRequest{Page: a4(t)}, `unknown theme ""`},
		{"bad numbering", stage.StyleRequest{Theme: "basic", Page: a4(t), Numbering: "top"}, `unknown page numbering "top"`},
		{"tiny page", stage.StyleRequest{Theme: "basic", Page: stage.PageSize{WidthPt: 10, HeightPt: 10}}, "outside"},
		{"negative page", stage.StyleRequest{Theme: "basic", Page: stage.PageSize{WidthPt: -595, HeightPt: 842}}, "outside"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := s.Style(t.Context(), &tt.req)
			var se *stage.Error
			if !errors.As(err, &se) || se.Code != stage.CodeInvalid || !strings.Contains(se.Message, tt.want) {
				t.Fatalf("err = %v, want CodeInvalid containing %q", err, tt.want)
			}
		})
	}
	if _, err := s.Tokens("fancy", a4(t)); stage.CodeOf(err) != stage.CodeInvalid {
		t.Errorf("Tokens of an unknown theme: %v", err)
	}
}

func TestZeroPageIsA4AndEmptyNumberingIsNone(t *testing.T) {
	doc := style(t, New(nil), &stage.StyleRequest{Theme: "modern"})
	if !strings.Contains(doc, "size: 595.28pt 841.89pt;") || strings.Contains(doc, "@bottom-") {
		t.Error("a zero page is not A4, or an empty numbering wrote page numbers")
	}
}

// TestTokensDiffer: the two themes differ in type, colour and spacing.
func TestTokensDiffer(t *testing.T) {
	s := New(nil)
	m, err := s.Tokens("modern", a4(t))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.Tokens("basic", a4(t))
	if err != nil {
		t.Fatal(err)
	}
	if m.Theme != "modern" || b.Theme != "basic" {
		t.Errorf("theme names %q, %q", m.Theme, b.Theme)
	}
	if m.BodyFont != "sans" || b.BodyFont != "serif" || m.MonoFont != "mono" || b.MonoFont != "mono" {
		t.Errorf("fonts: modern %s/%s, basic %s/%s", m.BodyFont, m.MonoFont, b.BodyFont, b.MonoFont)
	}
	if m.TextColor == b.TextColor || m.HeadingColor == b.HeadingColor || m.CodeBackground == b.CodeBackground {
		t.Error("the themes share text, heading or code colours")
	}
	if b.TextColor != "#000000" || b.CodeBackground != "#ffffff" {
		t.Errorf("basic is not black on white: text %s, code background %s", b.TextColor, b.CodeBackground)
	}
	if m.ParagraphSpacing <= b.ParagraphSpacing || m.LineHeight <= b.LineHeight {
		t.Errorf("modern is not roomier: spacing %g vs %g, line height %g vs %g", m.ParagraphSpacing, b.ParagraphSpacing, m.LineHeight, b.LineHeight)
	}
	if !m.HeadingRule || b.HeadingRule {
		t.Errorf("heading rules: modern %v, basic %v", m.HeadingRule, b.HeadingRule)
	}
	if m.Margins == b.Margins || m.FontSize == b.FontSize {
		t.Error("the themes share margins or body size")
	}
}

// TestCSSMatchesTokens reads the custom properties back from the document
// and compares them with the tokens handed to non-CSS backends.
func TestCSSMatchesTokens(t *testing.T) {
	s := New(nil)
	varRe := regexp.MustCompile(`--md-([a-z0-9-]+): ([^;]+);`)
	for _, theme := range []string{"modern", "basic"} {
		// Every size: type scales below A6 and margins below A4.
		for _, name := range papers.Names() {
			t.Run(theme+"/"+name, func(t *testing.T) {
				res, err := s.Style(t.Context(), &stage.StyleRequest{Theme: theme, Page: mustPage(t, name)})
				if err != nil {
					t.Fatal(err)
				}
				vars := map[string]string{}
				for _, m := range varRe.FindAllStringSubmatch(res.HTML, -1) {
					vars[m[1]] = m[2]
				}
				tk := res.Tokens
				want := map[string]string{
					"font-size": pt(tk.FontSize), "line-height": strconv.FormatFloat(tk.LineHeight, 'f', -1, 64),
					"text": tk.TextColor, "heading": tk.HeadingColor, "link": tk.LinkColor, "muted": tk.MutedColor,
					"rule": tk.RuleColor, "code-bg": tk.CodeBackground, "code": tk.CodeColor, "quote-bar": tk.QuoteBar,
					"table-head": tk.TableHeaderFill, "accent": tk.AccentColor, "space": pt(tk.ParagraphSpacing),
					"font-body": fontStacks[tk.BodyFont], "font-heading": fontStacks[tk.HeadingFont], "font-mono": fontStacks[tk.MonoFont],
					"code-indent": pt(tk.CodeIndent), "code-rule": pt(tk.CodeRule), "code-pad-block": pt(tk.CodePadding[0]),
					"code-pad-start": pt(tk.CodePadding[1]), "code-pad-end": pt(tk.CodePadding[2]),
					"quote-indent": pt(tk.QuoteIndent), "quote-style": quoteStyle(tk.QuoteItalic),
					"quote-bg": fill(tk.QuoteFill), "quote-pad": pt(tk.QuotePadding),
					"table-stripe": fill(tk.TableStripe), "link-decoration": linkDecoration(tk.LinkPlain),
					"strike-color": strikeColor(tk), "alert-pad": pt(alertPad(tk)),
					"list-item-space": pt(tk.ListItemSpacing), "code-size": em(tk.CodeSize),
					"code-line-height":    strconv.FormatFloat(tk.CodeLineHeight, 'f', -1, 64),
					"heading-space-above": pt(tk.HeadingSpacing[0]), "heading-space-below": pt(tk.HeadingSpacing[1]),
					"heading-line-height": strconv.FormatFloat(tk.HeadingLineHeight, 'f', -1, 64),
					"footnote-size":       em(tk.FootnoteSize),
				}
				for i, h := range tk.HeadingSizes {
					want[fmt.Sprintf("h%d", i+1)] = pt(h)
					want[fmt.Sprintf("h%d-style", i+1)] = headingStyle(tk.HeadingItalic[i])
					want[fmt.Sprintf("h%d-weight", i+1)] = headingWeight(tk.HeadingRegular[i])
					want[fmt.Sprintf("h%d-color", i+1)] = headingColor(tk, i)
				}
				for k, v := range want {
					if vars[k] != v {
						t.Errorf("--md-%s = %q, tokens say %q", k, vars[k], v)
					}
				}
			})
		}
	}
}

// TestThemesCoverGFM checks that each stylesheet styles every construct
// the parser emits, and carries the print rules.
func TestThemesCoverGFM(t *testing.T) {
	rules := []string{
		"table", "th, td", "thead", ".task-list-item", "li:has(> input[type=\"checkbox\"]", "list-style: none",
		`input[type="checkbox"]:checked`, "pre {", ":not(pre) > code", "blockquote {", ".footnotes", "img, svg, video { max-width: 100%",
		"hr {", "del, s", "h1, h2, h3, h4, h5, h6", "break-after: avoid", "break-inside: avoid", "tr, img { break-inside: avoid",
		"-webkit-print-color-adjust: exact", "print-color-adjust: exact", "var(--md-h6)", "var(--md-font-mono)",
	}
	for name, th := range builtins() {
		t.Run(name, func(t *testing.T) {
			for _, r := range rules {
				if !strings.Contains(th.css, r) {
					t.Errorf("%s.css lacks %q", name, r)
				}
			}
		})
	}
	if !strings.Contains(builtins()["modern"].css, "tbody tr:nth-child(even)") {
		t.Error("modern tables are not zebra-striped")
	}
	for font, stack := range fontStacks {
		if !strings.Contains(stack, "Noto Color Emoji") || (font != "mono" && !strings.Contains(stack, "CJK")) {
			t.Errorf("%s stack lacks CJK or emoji fallbacks: %s", font, stack)
		}
	}
}

func TestSkipHTMLReturnsTokensOnly(t *testing.T) {
	s := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := s.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	a4 := stage.PageSize{Name: "A4", WidthPt: 595.28, HeightPt: 841.89}
	req := &stage.StyleRequest{Document: stage.Document{HTML: "<h1>x</h1>", Title: "x"}, Theme: "basic", Page: a4, Numbering: stage.NumberingCenter}
	full, err := s.Style(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	req.SkipHTML = true
	lean, err := s.Style(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if lean.HTML != "" || lean.Tokens != full.Tokens {
		t.Fatalf("SkipHTML: html %q, tokens equal %v", lean.HTML, lean.Tokens == full.Tokens)
	}
}

// The document's language is the root's lang attribute, and no language
// is an empty one: a missing attribute has Chromium tag the PDF with its
// own locale (en-US) however the text reads.
func TestLangAttribute(t *testing.T) {
	for lang, want := range map[string]string{
		"fr":        `<html lang="fr">`,
		"zh-Hans":   `<html lang="zh-Hans">`,
		"":          `<html lang="">`,
		`x" onload`: `<html lang="x&#34; onload">`,
	} {
		doc := style(t, New(nil), &stage.StyleRequest{
			Document: stage.Document{HTML: "<p>x</p>"}, Theme: "modern", Page: a4(t), Lang: lang,
		})
		if !strings.Contains(doc, "<!DOCTYPE html>\n"+want+"\n<head>") {
			t.Errorf("lang %q: root is not %s:\n%s", lang, want, doc[:strings.Index(doc, "<title")])
		}
	}
}
