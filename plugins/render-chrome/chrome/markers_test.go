package chrome

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/performance"
)

// The numbers of an ordered list are read whole however wide they are:
// item 10000 of a list, and footnote 100 of a document, printed as
// "000." and "00.", their first digits past the page's edge, where
// Chromium cuts what it prints. A list whose numbers fit keeps its
// stylesheet's indent.
func TestListNumbersStayOnThePage(t *testing.T) {
	r := sharedRenderer(t)
	// The themes' indents: room for two digits or so.
	const css = `ol { padding-left: 1.4em; margin: 0 0 8pt; } .footnotes { font-size: 0.88em; }`
	var notes strings.Builder
	notes.WriteString(`<section class="footnotes"><ol>`)
	for i := 1; i <= 120; i++ {
		fmt.Fprintf(&notes, "<li>Note%d text</li>", i)
	}
	notes.WriteString("</ol></section>")
	items := func(start, n int) string {
		var b strings.Builder
		fmt.Fprintf(&b, `<ol start="%d">`, start)
		for i := start; i < start+n; i++ {
			fmt.Fprintf(&b, "<li>Item%d</li>", i)
		}
		return b.String() + "</ol>"
	}
	for _, tc := range []struct {
		name, body string
		want       []string // each the start of a line of pdftotext -raw
	}{
		{"start 9998", items(9998, 4), []string{"9998. Item9998", "10000. Item10000", "10001. Item10001"}},
		{"hundred footnotes", notes.String(), []string{"9. Note9", "100. Note100", "120. Note120"}},
		{"nested", "<ol><li>Outer<ol start=\"998\"><li>Inner998</li><li>Inner999</li><li>Inner1000</li></ol></li></ol>",
			[]string{"998. Inner998", "1000. Inner1000"}},
		{"reversed", `<ol reversed start="1001"><li>Down1001</li><li>Down1000</li><li>Down999</li></ol>`,
			[]string{"1001. Down1001", "999. Down999"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdf := render(t, r, doc{css: css, body: tc.body}).PDF
			text := run(t, "pdftotext", "-raw", writePDF(t, pdf), "-")
			for _, s := range tc.want {
				if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(s) + `\b`).MatchString(text) {
					t.Errorf("no line %q in the PDF's text:\n%s", s, text)
				}
			}
			words, _, _ := pdfWords(t, pdf)
			for _, w := range words {
				if w.xMin < 54-0.5 {
					t.Errorf("%q starts at %.1f pt, past the page's left margin of 54 pt, where the print cuts it", w.text, w.xMin)
				}
			}
		})
	}
	t.Run("numbers that fit", func(t *testing.T) {
		pdf := render(t, r, doc{css: css, body: "<p>Para</p>" + items(1, 3)}).PDF
		words, _, _ := pdfWords(t, pdf)
		// 12pt type, 1.4em of indent from the paragraph's edge.
		want := 1.4 * 12
		for _, w := range words {
			if w.text == "Para" {
				want += w.xMin
			}
		}
		for _, w := range words {
			if strings.HasPrefix(w.text, "Item") && (w.xMin < want-0.5 || w.xMin > want+0.5) {
				t.Errorf("%q starts at %.1f pt, not at the stylesheet's indent %.1f pt", w.text, w.xMin, want)
			}
		}
	})
}

// Fitting the numbers lays the document out a fixed number of times,
// however many lists it widens: read between the writes, each list laid
// the whole document out again, and 3,000 lists numbered from 123456789
// (a Markdown document of 60 KB) took 30 s to print instead of 3.
func TestListNumbersFitInFewLayouts(t *testing.T) {
	bb := newBareBrowser(t, 1)
	tb := <-bb.tabs
	ctx, cancel := context.WithTimeout(bb.ctx, time.Minute)
	defer cancel()
	var body strings.Builder
	for i := range 300 {
		fmt.Fprintf(&body, `<ol start="123456789"><li>Item%d</li><li>Next</li></ol><ol type="i" start="3888"><li>Roman</li></ol><p>Para</p>`, i)
	}
	html := doc{css: `ol { padding-left: 1.4em; }`, body: body.String()}.html()
	if _, err := cdp.Call(ctx, tb.target, page.SetDocumentContent, page.SetDocumentContentParams{FrameID: tb.frame, HTML: html}); err != nil {
		t.Fatal(err)
	}
	if _, err := cdp.Call(ctx, tb.target, performance.Enable, performance.EnableParams{}); err != nil {
		t.Fatal(err)
	}
	layouts := func() float64 {
		m, err := cdp.Call(ctx, tb.target, performance.GetMetrics, cdp.Empty{})
		if err != nil {
			t.Fatal(err)
		}
		for _, x := range m.Metrics {
			if x.Name == "LayoutCount" {
				return x.Value
			}
		}
		t.Fatal("no LayoutCount metric")
		return 0
	}
	before := layouts()
	tab := &tab{ctx: ctx, target: tb.target}
	n, err := tab.fitMarkers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n != 600 {
		t.Errorf("%d lists widened, want 600", n)
	}
	if got := layouts() - before; got > 4 {
		t.Errorf("fitting the numbers of 600 lists took %v layouts of the document, want a few", got)
	}
}
