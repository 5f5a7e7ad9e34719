package markdown

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestTitleAndOutline checks titles, outline texts and levels; the ids are
// goldmark's own (made from the raw source line) and must match the HTML.
func TestTitleAndOutline(t *testing.T) {
	tests := []struct {
		name    string
		src     string
		title   string
		outline []stage.Heading
	}{
		{name: "no heading", src: "just text\n"},
		{name: "first heading of any level", src: "text\n\n### Third *level*\n\n# First\n", title: "Third level",
			outline: []stage.Heading{{Level: 3, Text: "Third level", ID: "third-level"}, {Level: 1, Text: "First", ID: "first"}}},
		{name: "badges left out", src: "# errors [![CI](ci.svg)](https://ci) [![Doc](d.svg)](https://d)\n", title: "errors",
			outline: []stage.Heading{{Level: 1, Text: "errors", ID: "errors-cicisvghttpsci-docdsvghttpsd"}}},
		{name: "image-only heading keeps its alt", src: "# ![Logo](logo.png)\n", title: "Logo",
			outline: []stage.Heading{{Level: 1, Text: "Logo", ID: "logologopng"}}},
		{name: "whitespace collapsed", src: "Title\nover   lines\n===\n", title: "Title over lines",
			outline: []stage.Heading{{Level: 1, Text: "Title over lines", ID: "over---lines"}}},
		{name: "entities and code", src: "## A &amp; `b<c>`\n", title: "A & b<c>",
			outline: []stage.Heading{{Level: 2, Text: "A & b<c>", ID: "a-amp-bc"}}},
		{name: "heading in a quote", src: "> # Quoted\n", title: "Quoted",
			outline: []stage.Heading{{Level: 1, Text: "Quoted", ID: "quoted"}}},
	}
	p := New(nil)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: tt.src})
			if err != nil {
				t.Fatal(err)
			}
			doc := res.Document
			if doc.Title != tt.title {
				t.Errorf("title = %q, want %q", doc.Title, tt.title)
			}
			if len(doc.Outline) != len(tt.outline) {
				t.Fatalf("outline = %+v, want %+v", doc.Outline, tt.outline)
			}
			for i, h := range doc.Outline {
				if h != tt.outline[i] {
					t.Errorf("outline[%d] = %+v, want %+v", i, h, tt.outline[i])
				}
				if !strings.Contains(doc.HTML, ` id="`+h.ID+`"`) {
					t.Errorf("outline id %q not in the HTML %s", h.ID, doc.HTML)
				}
			}
		})
	}
}

func TestParseHonoursContext(t *testing.T) {
	cancelled, cancel := context.WithCancel(t.Context())
	cancel()
	expired, cancel2 := context.WithDeadline(t.Context(), time.Now().Add(-time.Second))
	defer cancel2()
	for name, ctx := range map[string]context.Context{"cancelled": cancelled, "expired": expired} {
		t.Run(name, func(t *testing.T) {
			_, err := New(nil).Parse(ctx, &stage.ParseRequest{Markdown: "# hi\n"})
			if stage.CodeOf(err) != stage.CodeTimeout || !errors.Is(err, ctx.Err()) {
				t.Fatalf("Parse with a %s context = %v, want a timeout wrapping %v", name, err, ctx.Err())
			}
		})
	}
}

// TestConvertStopsOnCancel cancels during the tree conversion, the one
// phase that checks the context as it goes.
func TestConvertStopsOnCancel(t *testing.T) {
	src := []byte(strings.Repeat("word *em* `code`\n\n", 5000))
	doc := New(nil).md.Parser().Parse(textReader(src))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := convert(ctx, nil, doc, src, DefaultConfig()); stage.CodeOf(err) != stage.CodeTimeout {
		t.Fatalf("convert with a cancelled context = %v, want a timeout", err)
	}
}

func TestMaxNodes(t *testing.T) {
	p := New(nil)
	if _, err := p.Configure(t.Context(), &stage.ConfigureRequest{Config: []byte(`{"maxNodes": 1000}`)}); err != nil {
		t.Fatal(err)
	}
	if _, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: strings.Repeat("para\n\n", 400)}); err != nil {
		t.Fatalf("801 nodes refused: %v", err)
	}
	_, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: strings.Repeat("para\n\n", 600)})
	var se *stage.Error
	if !errors.As(err, &se) || se.Code != stage.CodeTooLarge || se.Details["limit"] != "1000" {
		t.Fatalf("1201 nodes: err = %v, want CodeTooLarge with limit 1000", err)
	}
}

func TestEmptyInput(t *testing.T) {
	res, err := New(nil).Parse(t.Context(), &stage.ParseRequest{Markdown: ""})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Document; d.HTML != "" || d.Title != "" || len(d.Outline) != 0 || d.Root == nil || d.Root.Kind != stage.KindDocument || len(d.Root.Children) != 0 {
		t.Fatalf("empty input gave %+v", d)
	}
}

func TestSkipHTMLKeepsTheTree(t *testing.T) {
	p := New(slog.New(slog.NewTextHandler(io.Discard, nil)))
	if _, err := p.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte("{}")}); err != nil {
		t.Fatal(err)
	}
	md := "# Title\n\nSome *text*.\n"
	full, err := p.Parse(context.Background(), &stage.ParseRequest{Markdown: md})
	if err != nil {
		t.Fatal(err)
	}
	lean, err := p.Parse(context.Background(), &stage.ParseRequest{Markdown: md, SkipHTML: true})
	if err != nil {
		t.Fatal(err)
	}
	if lean.Document.HTML != "" || full.Document.HTML == "" {
		t.Fatalf("HTML: lean %q, full %q", lean.Document.HTML, full.Document.HTML)
	}
	if lean.Document.Root.PlainText() != full.Document.Root.PlainText() || lean.Document.Title != "Title" || len(lean.Document.Outline) != 1 {
		t.Fatalf("tree, title or outline changed: %+v", lean.Document)
	}
}

// TestByteOrderMark: a UTF-8 byte order mark before the Markdown (Windows
// editors write one) is dropped, as cmark and GitHub drop it: goldmark
// read it as text, so the first line's "# Notes" was a paragraph that
// printed its hash, and the document had no title.
func TestByteOrderMark(t *testing.T) {
	const src = "\ufeff# Notes\n\ntext\n"
	p := New(nil)
	res, err := p.Parse(t.Context(), &stage.ParseRequest{Markdown: src})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Document; d.Title != "Notes" || !strings.HasPrefix(d.HTML, `<h1 id="notes"`) || strings.Contains(d.HTML, "\ufeff") {
		t.Fatalf("title %q, HTML %q: want the heading Notes and no byte order mark", d.Title, d.HTML)
	}
	if got := treeText(res.Document.Root); strings.Contains(got, "\ufeff") || strings.Contains(got, "#") {
		t.Fatalf("tree keeps the mark or the hash:\n%s", got)
	}
	_, parts, err := parseParts(t.Context(), New(nil), src)
	if err != nil || parts.Document.Title != "Notes" {
		t.Fatalf("ParseParts: title %q, %v; want Notes", parts.Document.Title, err)
	}
	checkParts(t, New(nil), src)
}
