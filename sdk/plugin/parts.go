package plugin

import (
	"context"
	"errors"
	"fmt"
	"io"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mdpress/mdpress/sdk/internal/pb"
	"github.com/mdpress/mdpress/sdk/stage"
)

// ParseParts streams the parse in parts (stage.PartParser). A parser that
// does not serve ParseParts is called with Parse, and its tree handed on as
// one part. With RelayTrees the parts stay encoded.
func (c *Client) ParseParts(ctx context.Context, req *stage.ParseRequest, emit func(stage.Part) error) (*stage.ParseResponse, error) {
	// Cancelled once the last message is in, as Render's stream is.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.parse.ParseParts(sctx, &pb.ParseRequest{Markdown: req.Markdown, SkipHtml: req.SkipHTML})
	if err != nil {
		return nil, fromStatus(err)
	}
	for first := true; ; first = false {
		msg, err := stream.Recv()
		if err != nil {
			if first && status.Code(err) == codes.Unimplemented {
				return c.parseAsOnePart(ctx, req, emit)
			}
			if errors.Is(err, io.EOF) {
				return nil, stage.Wrap(stage.CodeInternal, errors.New("parse stream ended without the document"), "internal error")
			}
			return nil, fromStatus(err)
		}
		if d := msg.GetDocument(); d != nil {
			doc, err := docFromPB(d, true)
			if err != nil {
				return nil, stage.Wrap(stage.CodeInternal, err, "internal error")
			}
			doc.Encoded = nil
			return &stage.ParseResponse{Document: doc}, nil
		}
		part := stage.Part{Encoded: msg.GetTree()}
		if !c.relay {
			if part.Root, err = decodePart(part.Encoded); err != nil {
				return nil, stage.Wrap(stage.CodeInternal, err, "internal error")
			}
			part.Encoded = nil
		}
		if err := emit(part); err != nil {
			return nil, err
		}
	}
}

func (c *Client) parseAsOnePart(ctx context.Context, req *stage.ParseRequest, emit func(stage.Part) error) (*stage.ParseResponse, error) {
	resp, err := c.Parse(ctx, req)
	if err != nil {
		return nil, err
	}
	doc := resp.Document
	if doc.Root != nil || len(doc.Encoded) > 0 {
		if err := emit(stage.Part{Root: doc.Root, Encoded: doc.Encoded}); err != nil {
			return nil, err
		}
	}
	doc.Root, doc.Encoded = nil, nil
	return &stage.ParseResponse{Document: doc}, nil
}

// RenderParts renders a tree whose parts come from parts as they are
// parsed (stage.PartRenderer); the host calls it only on a renderer that
// declares stage.CapReadsTreeParts. When parts fails, the render is
// cancelled and parts' error returned.
func (c *Client) RenderParts(ctx context.Context, req *stage.RenderRequest, parts stage.Parts) (*stage.RenderResponse, error) {
	head := req.Document
	head.Root, head.Encoded = nil, nil
	doc, err := docToPB(head)
	if err != nil {
		return nil, stage.Wrap(stage.CodeInternal, err, "internal error")
	}
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.render.RenderParts(sctx)
	if err != nil {
		return nil, fromStatus(err)
	}
	// A failed Send means the stream is broken; the reason arrives through
	// Recv, so the sender just stops.
	var partsErr error
	sent := make(chan struct{})
	go func() {
		defer close(sent)
		if stream.Send(&pb.RenderPart{Request: &pb.RenderRequest{Html: req.HTML, Document: doc,
			Tokens: tokensToPB(req.Tokens), Page: pageToPB(req.Page), Numbering: string(req.Numbering), Watermark: req.Watermark,
			Lang: req.Lang}}) != nil {
			return
		}
		for {
			p, err := parts.Next(sctx)
			if errors.Is(err, io.EOF) {
				rest, err := docToPB(parts.Rest())
				if err != nil {
					partsErr = stage.Wrap(stage.CodeInternal, err, "internal error")
					cancel()
					return
				}
				rest.Tree, rest.Html = nil, ""
				if stream.Send(&pb.RenderPart{Document: rest}) == nil {
					_ = stream.CloseSend()
				}
				return
			}
			if err != nil {
				if sctx.Err() == nil { // not the render's own end
					partsErr = err
					cancel()
				}
				return
			}
			tree := p.Encoded
			if p.Root != nil {
				if tree, err = encodeTree(p.Root); err != nil {
					partsErr = stage.Wrap(stage.CodeInternal, err, "internal error")
					cancel()
					return
				}
			}
			if stream.Send(&pb.RenderPart{Tree: tree}) != nil {
				return
			}
		}
	}()
	resp, err := receivePDF(stream)
	cancel()
	<-sent
	if partsErr != nil {
		return nil, partsErr
	}
	return resp, err
}

// receivePDF reads a render's chunks until the one marked last.
func receivePDF(stream grpc.ClientStream) (*stage.RenderResponse, error) {
	var pdf []byte
	resp := &stage.RenderResponse{}
	for {
		chunk := new(pb.RenderChunk)
		err := stream.RecvMsg(chunk)
		if errors.Is(err, io.EOF) { // a plugin that does not mark its last chunk
			break
		}
		if err != nil {
			return nil, fromStatus(err)
		}
		if pdf == nil {
			// Unmarshalling copied the chunk out of gRPC's buffer already:
			// a PDF of one chunk, as nearly every one is, is used as it
			// came rather than copied again.
			pdf = chunk.Data
		} else {
			pdf = append(pdf, chunk.Data...)
		}
		if chunk.Pages > 0 {
			resp.Pages = int(chunk.Pages)
		}
		if chunk.Last {
			break
		}
	}
	resp.PDF = pdf
	return resp, nil
}

// decodePart decodes a part's tree, which must be a document node.
func decodePart(b []byte) (*stage.Node, error) {
	root, err := decodeTree(b)
	if err != nil {
		return nil, err
	}
	if root == nil || root.Kind != stage.KindDocument {
		return nil, fmt.Errorf("%w: a part must be a document node", errBadTree)
	}
	return root, nil
}

// ParseParts serves the parse in parts: a PartParser's own, or a plain
// Parser's tree as one part.
func (s *parseServer) ParseParts(req *pb.ParseRequest, stream grpc.ServerStreamingServer[pb.ParsePart]) error {
	sreq := &stage.ParseRequest{Markdown: req.GetMarkdown(), SkipHTML: req.GetSkipHtml()}
	// A failed Send is the host gone: its error is returned as is, not as
	// the parser's.
	var sendErr error
	emit := func(p stage.Part) error {
		tree := p.Encoded
		if p.Root != nil {
			var err error
			if tree, err = encodeTree(p.Root); err != nil {
				return err
			}
		}
		if err := stream.Send(&pb.ParsePart{Tree: tree}); err != nil {
			sendErr = err
			return err
		}
		return nil
	}
	ctx := stream.Context()
	var resp *stage.ParseResponse
	var err error
	if pp, ok := s.impl.(stage.PartParser); ok {
		resp, err = pp.ParseParts(ctx, sreq, emit)
	} else if resp, err = s.impl.Parse(ctx, sreq); err == nil && resp.Document.Root != nil {
		err = emit(stage.Part{Root: resp.Document.Root})
	}
	if sendErr != nil {
		return sendErr
	}
	if err != nil {
		return toStatus(ctx, err)
	}
	rest := resp.Document
	rest.Root, rest.Encoded = nil, nil
	doc, err := docToPB(rest)
	if err != nil {
		return toStatus(ctx, err)
	}
	return stream.Send(&pb.ParsePart{Document: doc})
}

// RenderParts serves a render whose tree arrives in parts: a PartRenderer
// lays them out as they come, a plain Renderer gets them joined.
func (s *renderServer) RenderParts(stream grpc.BidiStreamingServer[pb.RenderPart, pb.RenderChunk]) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	in := first.GetRequest()
	if in == nil {
		return toStatus(ctx, stage.Errorf(stage.CodeInvalid, "a render in parts must start with its request"))
	}
	doc, err := docFromPB(in.GetDocument(), false)
	if err != nil {
		return toStatus(ctx, err)
	}
	req := &stage.RenderRequest{
		HTML: in.GetHtml(), Document: doc, Tokens: tokensFromPB(in.GetTokens()),
		Page: pageFromPB(in.GetPage()), Numbering: stage.Numbering(in.GetNumbering()), Watermark: in.GetWatermark(),
		Lang: in.GetLang(),
	}
	parts := &streamParts{stream: stream}
	var resp *stage.RenderResponse
	if pr, ok := s.impl.(stage.PartRenderer); ok {
		resp, err = pr.RenderParts(ctx, req, parts)
	} else if req.Document.Root, err = JoinParts(ctx, parts); err == nil {
		rest := parts.Rest()
		req.Document.Title, req.Document.Outline = rest.Title, rest.Outline
		resp, err = s.impl.Render(ctx, req)
	}
	if err != nil {
		return toStatus(ctx, err)
	}
	if !parts.done {
		// A PDF of part of the document would be delivered, and charged.
		return toStatus(ctx, stage.Wrap(stage.CodeInternal, errors.New("the renderer answered before the end of its parts"), "render failed"))
	}
	return sendPDF(stream, resp)
}

// streamParts reads a render's parts off its stream.
type streamParts struct {
	stream grpc.BidiStreamingServer[pb.RenderPart, pb.RenderChunk]
	rest   stage.Document
	done   bool
}

func (p *streamParts) Next(ctx context.Context) (stage.Part, error) {
	if p.done {
		return stage.Part{}, io.EOF
	}
	if err := ctx.Err(); err != nil {
		return stage.Part{}, err
	}
	msg, err := p.stream.Recv()
	if errors.Is(err, io.EOF) {
		return stage.Part{}, stage.Errorf(stage.CodeInvalid, "the tree's parts ended without the rest of the document")
	}
	if err != nil {
		// The host cancelled the render (its parse failed, its request does
		// not go ahead): say so as a context error, which is no failure of
		// the renderer, not as the stream's status.
		if cerr := p.stream.Context().Err(); cerr != nil {
			return stage.Part{}, cerr
		}
		return stage.Part{}, err
	}
	if d := msg.GetDocument(); d != nil {
		if p.rest, err = docFromPB(d, true); err != nil {
			return stage.Part{}, err
		}
		p.rest.Encoded, p.done = nil, true
		return stage.Part{}, io.EOF
	}
	root, err := decodePart(msg.GetTree())
	if err != nil {
		return stage.Part{}, toStage(err)
	}
	return stage.Part{Root: root}, nil
}

func (p *streamParts) Rest() stage.Document { return p.rest }

// toStage makes a malformed tree an invalid request.
func toStage(err error) error {
	if errors.Is(err, errBadTree) {
		return stage.Wrap(stage.CodeInvalid, err, "malformed document tree")
	}
	return err
}

// JoinParts reads every part and returns one tree holding their blocks:
// how a renderer that lays out a whole tree reads one handed over in parts.
func JoinParts(ctx context.Context, parts stage.Parts) (*stage.Node, error) {
	root := &stage.Node{Kind: stage.KindDocument}
	for {
		p, err := parts.Next(ctx)
		if errors.Is(err, io.EOF) {
			return root, nil
		}
		if err != nil {
			return nil, err
		}
		if p.Root != nil {
			root.Children = append(root.Children, p.Root.Children...)
		}
	}
}
