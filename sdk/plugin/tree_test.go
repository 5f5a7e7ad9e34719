package plugin

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/mdpress/mdpress/sdk/internal/pb"
	"github.com/mdpress/mdpress/sdk/stage"
)

func node(kind stage.Kind, attrs map[string]string, children ...*stage.Node) *stage.Node {
	return &stage.Node{Kind: kind, Attrs: attrs, Children: children}
}

func text(s string) *stage.Node { return &stage.Node{Kind: stage.KindText, Text: s} }

// report is a tree of the shape real documents have: sections of a
// heading, a paragraph with marks and a link, a list and a table.
func report(sections int) *stage.Node {
	root := node(stage.KindDocument, nil)
	for i := range sections {
		cell := func(s, align string) *stage.Node {
			return node(stage.KindTableCell, map[string]string{"align": align}, text(s))
		}
		item := func(s string) *stage.Node {
			return node(stage.KindListItem, nil, node(stage.KindParagraph, nil, text(s)))
		}
		root.Children = append(root.Children,
			node(stage.KindHeading, map[string]string{"level": "2", "id": fmt.Sprint("section-", i)}, text(fmt.Sprint("Section ", i))),
			node(stage.KindParagraph, nil, text("This paragraph describes the results in some detail, with "),
				node(stage.KindStrong, nil, text("bold")), text(" and "), node(stage.KindEmphasis, nil, text("italic")),
				text(" words and a "), node(stage.KindLink, map[string]string{"href": "https://example.com", "title": ""}, text("link")),
				&stage.Node{Kind: stage.KindSoftBreak}, &stage.Node{Kind: stage.KindCodeSpan, Text: "x := 1"}),
			node(stage.KindList, map[string]string{"tight": "true"}, item("first"), item("second"), item("third")),
			node(stage.KindTable, nil,
				node(stage.KindTableHead, nil, cell("metric", ""), cell("value", "right")),
				node(stage.KindTableRow, nil, cell("revenue", ""), cell(fmt.Sprint(1000+i), "right"))),
			&stage.Node{Kind: stage.KindCodeBlock, Text: "func main() {\n\tprintln(\"ünïcödé ✓\")\n}\n", Attrs: map[string]string{"lang": "go"}},
		)
	}
	return root
}

func TestTreeRoundTrip(t *testing.T) {
	deep := node(stage.KindDocument, nil)
	for n, i := deep, 0; i < 10000; i++ {
		c := node(stage.KindBlockquote, nil)
		n.Children = []*stage.Node{c}
		n = c
	}
	for name, root := range map[string]*stage.Node{
		"report":        report(28),
		"root only":     node(stage.KindDocument, nil),
		"empty strings": node(stage.KindDocument, map[string]string{"": ""}, text(""), text("")),
		"unknown kind":  node("custom-kind", map[string]string{"k": "v"}, node("other", nil)),
		"alert": node(stage.KindDocument, nil, node(stage.KindBlockquote, map[string]string{"alert": "warning"},
			node(stage.KindParagraph, map[string]string{"alert_title": "true"}, text("Warning")),
			node(stage.KindParagraph, nil, text("body")))),
		"10,000 levels":   deep,
		"invalid UTF-8":   node(stage.KindDocument, nil, text("\xff\xfe bytes")),
		"nested siblings": node(stage.KindDocument, nil, node(stage.KindList, nil, node(stage.KindListItem, nil, text("a")), node(stage.KindListItem, nil)), text("after")),
	} {
		t.Run(name, func(t *testing.T) {
			b, err := encodeTree(root)
			if err != nil {
				t.Fatal(err)
			}
			got, err := decodeTree(b)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, root) {
				t.Fatalf("tree changed on the wire")
			}
			again, _ := encodeTree(got)
			if string(again) != string(b) {
				t.Fatal("encoding is not deterministic")
			}
		})
	}
}

// The decoded children slices are full: a consumer appending to one node's
// children must not overwrite its sibling's.
func TestDecodedChildrenDoNotAlias(t *testing.T) {
	b, _ := encodeTree(node(stage.KindDocument, nil, node(stage.KindParagraph, nil, text("a")), node(stage.KindParagraph, nil, text("b"))))
	root, err := decodeTree(b)
	if err != nil {
		t.Fatal(err)
	}
	first := root.Children[0]
	first.Children = append(first.Children, text("added"))
	if got := root.Children[1].PlainText(); got != "b" {
		t.Fatalf("sibling became %q after an append", got)
	}
}

func TestEncodeRejectsNilChild(t *testing.T) {
	if _, err := encodeTree(node(stage.KindDocument, nil, nil)); err == nil {
		t.Fatal("a nil child encoded")
	}
}

// Hand-made trees that do not describe one tree must fail cleanly.
func TestDecodeRejectsMalformedTrees(t *testing.T) {
	good := func() *pb.Tree {
		return &pb.Tree{Kinds: []string{"document", "text"}, Kind: []uint32{0, 1}, Children: []uint32{1, 0},
			Attrs: []uint32{0, 0}, Strings: []byte("hi"), Lengths: []uint32{0, 2}}
	}
	for name, mutate := range map[string]func(*pb.Tree){
		"kind out of range":   func(t *pb.Tree) { t.Kind[1] = 2 },
		"short child counts":  func(t *pb.Tree) { t.Children = t.Children[:1] },
		"too many children":   func(t *pb.Tree) { t.Children[0] = 2 },
		"huge child count":    func(t *pb.Tree) { t.Children[0] = 1 << 31 },
		"second root":         func(t *pb.Tree) { t.Children[0] = 0 },
		"string past the end": func(t *pb.Tree) { t.Lengths[1] = 3 },
		"huge string":         func(t *pb.Tree) { t.Lengths[1] = 1<<32 - 1 },
		"missing lengths":     func(t *pb.Tree) { t.Lengths = t.Lengths[:1] },
		"leftover strings":    func(t *pb.Tree) { t.Strings = []byte("hi!") },
		"attributes unbacked": func(t *pb.Tree) { t.Attrs[1] = 1 << 30 },
		"no nodes":            func(t *pb.Tree) { *t = pb.Tree{Kinds: []string{"document"}} },
		"half an attribute":   func(t *pb.Tree) { t.Attrs[1] = 1; t.Lengths = append(t.Lengths, 0) },
	} {
		t.Run(name, func(t *testing.T) {
			tr := good()
			mutate(tr)
			b, _ := proto.Marshal(tr)
			if root, err := decodeTree(b); err == nil {
				t.Fatalf("decoded %+v", root)
			}
		})
	}
	b, _ := proto.Marshal(good())
	if root, err := decodeTree(b); err != nil || root.PlainText() != "hi" {
		t.Fatalf("the unmutated tree: %v, %v", root, err)
	}
	if _, err := decodeTree([]byte{0xff, 0xff}); err == nil {
		t.Fatal("garbage decoded")
	}
}

func FuzzDecodeTree(f *testing.F) {
	b, _ := encodeTree(report(2))
	f.Add(b)
	b, _ = encodeTree(node(stage.KindDocument, nil, node(stage.KindBlockquote, map[string]string{"alert": "note"},
		node(stage.KindParagraph, map[string]string{"alert_title": "true"}, text("Note")))))
	f.Add(b)
	f.Fuzz(func(t *testing.T, b []byte) {
		root, err := decodeTree(b)
		if err != nil || root == nil {
			return
		}
		// Whatever decodes must encode and decode to the same tree.
		again, err := encodeTree(root)
		if err != nil {
			t.Fatal(err)
		}
		if back, err := decodeTree(again); err != nil || !reflect.DeepEqual(back, root) {
			t.Fatalf("re-encoding changed the tree: %v", err)
		}
	})
}

// relayStages is a parser and a renderer: the renderer reports the text of
// the tree it got, so a test sees what survived the relay.
type relayStages struct{ fakeStages }

func (relayStages) Parse(_ context.Context, req *stage.ParseRequest) (*stage.ParseResponse, error) {
	return &stage.ParseResponse{Document: stage.Document{Root: report(3), Title: req.Markdown}}, nil
}

func (relayStages) Render(_ context.Context, req *stage.RenderRequest) (*stage.RenderResponse, error) {
	if !reflect.DeepEqual(req.Document.Root, report(3)) {
		return nil, stage.Errorf(stage.CodeInvalid, "the tree did not cross intact")
	}
	return &stage.RenderResponse{PDF: []byte(req.Document.Root.PlainText()), Pages: 1}, nil
}

func TestRelayedTreeReachesRendererIntact(t *testing.T) {
	impl := &relayStages{}
	parser, renderer := connect(t, stage.NameParse, impl), connect(t, stage.NameRender, impl)
	ctx := context.Background()

	parsed, err := parser.Parse(ctx, &stage.ParseRequest{Markdown: "m"})
	if err != nil || parsed.Document.Encoded != nil || !reflect.DeepEqual(parsed.Document.Root, report(3)) {
		t.Fatalf("a plain client must decode the tree: %v", err)
	}

	parser.RelayTrees()
	relayed, err := parser.Parse(ctx, &stage.ParseRequest{Markdown: "m"})
	if err != nil || relayed.Document.Root != nil || len(relayed.Document.Encoded) == 0 || relayed.Document.Title != "m" {
		t.Fatalf("a relaying client must keep the tree encoded: %+v, %v", relayed.Document, err)
	}
	resp, err := renderer.Render(ctx, &stage.RenderRequest{Document: relayed.Document})
	if err != nil || !strings.HasPrefix(string(resp.PDF), "Section 0 This paragraph") {
		t.Fatalf("render = %v", err)
	}

	bad := relayed.Document
	bad.Encoded = []byte{0x10, 0x05} // a kind index with no kinds
	if _, err := renderer.Render(ctx, &stage.RenderRequest{Document: bad}); stage.CodeOf(err) != stage.CodeInternal || strings.Contains(stage.SafeMessage(err), "malformed") {
		t.Fatalf("a malformed tree: %v", err)
	}
}

// BenchmarkTreeWire: one ten-page report tree through encode and decode,
// what the parser and the renderer each pay per document.
func BenchmarkTreeWire(b *testing.B) {
	root := report(28)
	wire, _ := encodeTree(root)
	nodes := 0
	root.Walk(func(*stage.Node) bool { nodes++; return true })
	b.Run("encode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := encodeTree(root); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(nodes), "nodes")
		b.ReportMetric(float64(len(wire)), "wire-bytes")
	})
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := decodeTree(wire); err != nil {
				b.Fatal(err)
			}
		}
	})
}
