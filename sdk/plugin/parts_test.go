package plugin

import (
	"context"
	"errors"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"

	"google.golang.org/grpc"

	"github.com/mdpress/mdpress/sdk/internal/pb"
	"github.com/mdpress/mdpress/sdk/stage"
)

// splitReport is report(n) in parts of size blocks each.
func splitReport(n, size int) []*stage.Node {
	var parts []*stage.Node
	all := report(n).Children
	for len(all) > 0 {
		k := min(size, len(all))
		parts = append(parts, node(stage.KindDocument, nil, all[:k]...))
		all = all[k:]
	}
	return parts
}

// partStages parses into parts and renders parts, recording what crossed.
type partStages struct {
	relayStages
	mu       sync.Mutex
	got      []*stage.Node // parts as the renderer read them
	rest     stage.Document
	nextErr  error // what the renderer's parts.Next said, when not EOF
	rendered chan struct{}
	gotOne   chan struct{} // closed when the renderer has its first part, if set
}

func (*partStages) ParseParts(_ context.Context, req *stage.ParseRequest, emit func(stage.Part) error) (*stage.ParseResponse, error) {
	for _, p := range splitReport(3, 4) {
		if err := emit(stage.Part{Root: p}); err != nil {
			return nil, err
		}
	}
	return &stage.ParseResponse{Document: stage.Document{Title: req.Markdown, Outline: []stage.Heading{{Level: 2, Text: "Section 0", ID: "section-0"}}}}, nil
}

func (s *partStages) RenderParts(ctx context.Context, req *stage.RenderRequest, parts stage.Parts) (*stage.RenderResponse, error) {
	defer close(s.rendered)
	for {
		p, err := parts.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			s.mu.Lock()
			s.nextErr = err
			s.mu.Unlock()
			return nil, err
		}
		s.mu.Lock()
		s.got = append(s.got, p.Root)
		s.mu.Unlock()
		if s.gotOne != nil && len(s.got) == 1 {
			close(s.gotOne)
		}
	}
	s.rest = parts.Rest()
	return &stage.RenderResponse{PDF: []byte("%PDF " + req.Watermark), Pages: len(s.got)}, nil
}

// sliceParts hands over parts from a slice, then fails with err if set.
type sliceParts struct {
	parts []stage.Part
	rest  stage.Document
	err   error
	wait  chan struct{} // closed before err is returned, if set
}

func (s *sliceParts) Next(ctx context.Context) (stage.Part, error) {
	if len(s.parts) == 0 {
		if s.err != nil {
			if s.wait != nil {
				<-s.wait
			}
			return stage.Part{}, s.err
		}
		return stage.Part{}, io.EOF
	}
	p := s.parts[0]
	s.parts = s.parts[1:]
	return p, nil
}

func (s *sliceParts) Rest() stage.Document { return s.rest }

// collect gathers a ParseParts' parts.
func collect(t *testing.T, c *Client, markdown string) (*sliceParts, *stage.ParseResponse) {
	t.Helper()
	sp := &sliceParts{}
	resp, err := c.ParseParts(context.Background(), &stage.ParseRequest{Markdown: markdown, SkipHTML: true}, func(p stage.Part) error {
		sp.parts = append(sp.parts, p)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Document.Root != nil || resp.Document.Encoded != nil {
		t.Fatal("the rest of the document carries a tree")
	}
	sp.rest = resp.Document
	return sp, resp
}

// The parser's parts reach the renderer as the parser cut them, relayed
// undecoded, and the rest of the document follows them.
func TestPartsCrossIntact(t *testing.T) {
	impl := &partStages{rendered: make(chan struct{})}
	parser, renderer := connect(t, stage.NameParse, impl), connect(t, stage.NameRender, impl)
	parser.RelayTrees()
	parts, resp := collect(t, parser, "Report")
	if len(parts.parts) != 4 || parts.parts[0].Root != nil || len(parts.parts[0].Encoded) == 0 {
		t.Fatalf("%d parts, first %+v: a relaying client keeps them encoded", len(parts.parts), parts.parts[0])
	}
	if resp.Document.Title != "Report" || len(resp.Document.Outline) != 1 {
		t.Fatalf("rest = %+v", resp.Document)
	}
	out, err := renderer.RenderParts(context.Background(), &stage.RenderRequest{Watermark: "DRAFT"}, parts)
	if err != nil {
		t.Fatal(err)
	}
	if string(out.PDF) != "%PDF DRAFT" || out.Pages != 4 {
		t.Fatalf("render = %q, %d", out.PDF, out.Pages)
	}
	if !reflect.DeepEqual(impl.got, splitReport(3, 4)) {
		t.Fatal("the parts changed on the way")
	}
	if impl.rest.Title != "Report" || impl.rest.Outline[0].ID != "section-0" {
		t.Fatalf("the renderer's rest = %+v", impl.rest)
	}
}

// A plain Parser's tree comes as one part; a plain Renderer gets the parts
// joined into the whole tree.
func TestPartsForPlainStages(t *testing.T) {
	impl := &relayStages{}
	parser, renderer := connect(t, stage.NameParse, impl), connect(t, stage.NameRender, impl)
	parts, _ := collect(t, parser, "m")
	if len(parts.parts) != 1 || !reflect.DeepEqual(parts.parts[0].Root, report(3)) {
		t.Fatalf("a plain parser's tree: %d parts", len(parts.parts))
	}
	split := &sliceParts{rest: stage.Document{Title: "t"}}
	for _, p := range splitReport(3, 2) {
		split.parts = append(split.parts, stage.Part{Root: p})
	}
	out, err := renderer.RenderParts(context.Background(), &stage.RenderRequest{}, split)
	if err != nil || !strings.HasPrefix(string(out.PDF), "Section 0 This paragraph") {
		t.Fatalf("a plain renderer: %v", err) // relayStages.Render checks the whole tree
	}
}

// A parser that does not serve ParseParts (another language's plugin of an
// older contract) is called with Parse.
func TestParsePartsFallsBackToParse(t *testing.T) {
	c := dialParser(t, &parseOnly{})
	parts, resp := collect(t, c, "m")
	if len(parts.parts) != 1 || !reflect.DeepEqual(parts.parts[0].Root, report(1)) || resp.Document.Title != "only" {
		t.Fatalf("parts %+v, rest %+v", parts.parts, resp.Document)
	}
}

type parseOnly struct{ pb.UnimplementedParseServer }

func (parseOnly) Parse(context.Context, *pb.ParseRequest) (*pb.ParseResponse, error) {
	tree, err := encodeTree(report(1))
	return &pb.ParseResponse{Document: &pb.Document{Tree: tree, Title: "only"}}, err
}

func dialParser(t *testing.T, p pb.ParseServer) *Client {
	t.Helper()
	return dialWith(t, stage.NameParse, func(s *grpc.Server) { pb.RegisterParseServer(s, p) })
}

// A part that is not a document node, or not a tree, is refused as invalid.
func TestRenderPartsRefusesMalformedParts(t *testing.T) {
	for name, part := range map[string]stage.Part{
		"not a document": {Root: text("loose")},
		"not a tree":     {Encoded: []byte{0x10, 0x05}},
	} {
		t.Run(name, func(t *testing.T) {
			impl := &partStages{rendered: make(chan struct{})}
			renderer := connect(t, stage.NameRender, impl)
			_, err := renderer.RenderParts(context.Background(), &stage.RenderRequest{}, &sliceParts{parts: []stage.Part{part}})
			if stage.CodeOf(err) != stage.CodeInvalid || !strings.Contains(stage.SafeMessage(err), "malformed") {
				t.Fatalf("err = %v", err)
			}
		})
	}
}

// earlyRenderer answers after the first part, as a buggy renderer could.
type earlyRenderer struct{ relayStages }

func (earlyRenderer) RenderParts(ctx context.Context, _ *stage.RenderRequest, parts stage.Parts) (*stage.RenderResponse, error) {
	if _, err := parts.Next(ctx); err != nil {
		return nil, err
	}
	return &stage.RenderResponse{PDF: []byte("%PDF half"), Pages: 1}, nil
}

// A renderer that answers before reading every part would have part of the
// document delivered and charged: the SDK refuses its PDF.
func TestRenderPartsRefusesAnEarlyAnswer(t *testing.T) {
	renderer := connect(t, stage.NameRender, &earlyRenderer{})
	parts := &sliceParts{}
	for _, p := range splitReport(3, 4) {
		parts.parts = append(parts.parts, stage.Part{Root: p})
	}
	out, err := renderer.RenderParts(context.Background(), &stage.RenderRequest{}, parts)
	if err == nil || stage.CodeOf(err) != stage.CodeInternal || strings.Contains(stage.SafeMessage(err), "answered") {
		t.Fatalf("got %v, %v: want an internal error, its detail kept in the plugin", out, err)
	}
}
