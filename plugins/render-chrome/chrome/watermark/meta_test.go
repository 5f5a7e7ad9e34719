package watermark

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

// TestDescribeChromiumPDF: the printed file's Creator and Producer are
// replaced, and the user agent is gone from its bytes; a bookmark whose
// title matches a heading but for white space takes the heading's; the
// file stays valid, and a stamp afterwards keeps all of it.
func TestDescribeChromiumPDF(t *testing.T) {
	src := chromiumPDF(t)
	// The fixture's one heading is "Printed by Chromium"; this spacing
	// stands for the spaces Chromium drops where a heading wraps.
	heading := "Printed by Chro mium"
	out, err := Describe(src, Meta{Creator: "mdpress render-chrome", Producer: "mdpress", Headings: []string{"Other", heading}})
	if err != nil {
		t.Fatal(err)
	}
	stamped, err := Stamp(out, Mark{Text: "FREE PLAN"})
	if err != nil {
		t.Fatalf("stamp after describe: %v", err)
	}
	for name, pdf := range map[string][]byte{"described": out, "stamped": stamped} {
		t.Run(name, func(t *testing.T) {
			if bytes.Contains(pdf, []byte("HeadlessChrome")) {
				t.Error("the user agent is still in the file")
			}
			tool(t, pdf, "qpdf", "--check", "{}")
			info := tool(t, pdf, "pdfinfo", "{}")
			for _, want := range []string{"Creator:         mdpress render-chrome\n", "Producer:        mdpress\n", "Title:           test\n"} {
				if !strings.Contains(info, want) {
					t.Errorf("pdfinfo lacks %q:\n%s", want, info)
				}
			}
			var doc struct {
				Outlines []struct {
					Title string `json:"title"`
				} `json:"outlines"`
			}
			if err := json.Unmarshal([]byte(tool(t, pdf, "qpdf", "--json", "--json-key=outlines", "{}")), &doc); err != nil {
				t.Fatal(err)
			}
			if len(doc.Outlines) != 1 || doc.Outlines[0].Title != heading {
				t.Errorf("outline %+v, want one bookmark %q", doc.Outlines, heading)
			}
			if got := pageTexts(t, pdf); len(got) != 2 {
				t.Errorf("%d pages, want 2", len(got))
			}
		})
	}

	// The information alone is written in place: the file stays in one
	// piece, every offset where it was. One too long to fit goes in an
	// update, the old one blanked.
	inPlace, err := Describe(src, Meta{Creator: "mdpress render-chrome", Producer: "mdpress"})
	if err != nil || len(inPlace) != len(src) || bytes.Count(inPlace, []byte("%%EOF")) != 1 {
		t.Errorf("information in place: %d bytes of %d, %d %%%%EOF, %v", len(inPlace), len(src), bytes.Count(inPlace, []byte("%%EOF")), err)
	}
	long := strings.Repeat("mdpress ", 40)
	updated, err := Describe(src, Meta{Creator: long, Producer: "mdpress"})
	if err != nil {
		t.Fatal(err)
	}
	tool(t, updated, "qpdf", "--check", "{}")
	if info := tool(t, updated, "pdfinfo", "{}"); !strings.Contains(info, "Creator:         "+strings.TrimSpace(long)) || bytes.Contains(updated, []byte("HeadlessChrome")) {
		t.Errorf("a long Creator:\n%s", info)
	}

	// Nothing to change: the file comes back as it was.
	same, err := Describe(src, Meta{Headings: []string{"Printed by Chromium"}})
	if err != nil || !bytes.Equal(same, src) {
		t.Errorf("Describe with nothing to change: %d bytes of %d, %v", len(same), len(src), err)
	}
}

// TestMatchTitle: the heading a bookmark's title stands for, given how
// Chromium mangles the titles of headings that wrap or that a page break
// pushed down.
func TestMatchTitle(t *testing.T) {
	hs := newHeadingSet([]string{"Sub 4", "Go", "Go Go", "A heading that wraps on the page", "日本語の 見出し", "a b", "ab"})
	for title, want := range map[string]string{
		"Sub4":     "Sub 4",
		"Sub4Sub4": "Sub 4",
		"GoGo":     "Go Go", // a heading, not "Go" twice
		"Aheadingthatwraps" + "Aheadingthatwrapsonthepage":         "A heading that wraps on the page",
		"Aheading" + "Aheadingthat" + "Aheadingthatwrapsonthepage": "A heading that wraps on the page",
		"日本語の見出し日本語の見出し":                                           "日本語の 見出し",
		"Sub41":       "Sub 4", // a footnote reference's number
		"Sub412":      "Sub 4",
		"Go2":         "Go",
		"Sub4Sub5":    "",
		"xSub4":       "",
		"ab":          "", // "a b" and "ab": which one, nobody knows
		"Sub4Sub4Two": "",
		"":            "",
	} {
		if got := hs.match(title); got != want {
			t.Errorf("match(%q) = %q, want %q", title, got, want)
		}
	}
}

// TestTextStrings: what textString writes, decodeText reads back, and
// decodeText reads the escapes and hex forms other writers use.
func TestTextStrings(t *testing.T) {
	for _, s := range []string{"plain", "a (nested) \\ one", "Überblick 日本語 😀", ""} {
		got, ok := decodeText([]byte(textString(s)))
		if !ok || got != s {
			t.Errorf("decodeText(textString(%q)) = %q, %v", s, got, ok)
		}
	}
	for raw, want := range map[string]string{
		`(a\(b\)c\\d)`:       `a(b)c\d`,
		`(tab\there\101)`:    "tab\there" + "A",
		"(split\\\nline)":    "splitline",
		`<FEFF00E9 0041>`:    "éA",
		`<4142 4>`:           "AB@",
		`(caf\351)`:          "café",
		`(\376\377\000\351)`: "é",
	} {
		got, ok := decodeText([]byte(raw))
		if !ok || got != want {
			t.Errorf("decodeText(%s) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{"name", "(open", "<zz>", "<FEFF00>"} {
		if got, ok := decodeText([]byte(raw)); ok {
			t.Errorf("decodeText(%s) = %q, want no text", raw, got)
		}
	}
}
