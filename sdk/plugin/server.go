package plugin

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/mdpress/mdpress/sdk/internal/pb"
	"github.com/mdpress/mdpress/sdk/stage"
)

// registerServers registers the base service and the stage's service.
// checkImpl has already verified that impl implements the stage.
func registerServers(s *grpc.Server, stageName string, impl stage.Plugin) {
	pb.RegisterPluginServer(s, &baseServer{impl: impl})
	switch stageName {
	case stage.NameAuth:
		pb.RegisterAuthServer(s, &authServer{impl: impl.(stage.Authenticator)})
	case stage.NameMeter:
		pb.RegisterMeterServer(s, &meterServer{impl: impl.(stage.Meter)})
	case stage.NameParse:
		pb.RegisterParseServer(s, &parseServer{impl: impl.(stage.Parser)})
	case stage.NameStyle:
		pb.RegisterStyleServer(s, &styleServer{impl: impl.(stage.Styler)})
	case stage.NameRender:
		pb.RegisterRenderServer(s, &renderServer{impl: impl.(stage.Renderer)})
	case stage.NameSink:
		pb.RegisterSinkServer(s, &sinkServer{impl: impl.(stage.Sink)})
	}
}

type baseServer struct {
	pb.UnimplementedPluginServer
	impl stage.Plugin
}

func (s *baseServer) Configure(ctx context.Context, req *pb.ConfigureRequest) (*pb.ConfigureResponse, error) {
	cr := &stage.ConfigureRequest{
		Config:    req.GetConfig(),
		DataDir:   req.GetDataDir(),
		PublicURL: req.GetPublicUrl(),
		Accounts:  stage.AccountsConfig{Driver: req.GetAccountsDriver(), DSN: req.GetAccountsDsn()},
	}
	for _, p := range req.GetPlans() {
		cr.Plans = append(cr.Plans, planFromPB(p))
	}
	resp, err := s.impl.Configure(ctx, cr)
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.ConfigureResponse{Name: resp.Info.Name, Version: resp.Info.Version, Capabilities: resp.Info.Capabilities}, nil
}

func (s *baseServer) Health(ctx context.Context, _ *pb.HealthRequest) (*pb.HealthResponse, error) {
	if err := s.impl.Health(ctx); err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.HealthResponse{}, nil
}

func (s *baseServer) Metrics(ctx context.Context, _ *pb.MetricsRequest) (*pb.MetricsResponse, error) {
	mw, ok := s.impl.(MetricsWriter)
	if !ok {
		return &pb.MetricsResponse{}, nil
	}
	w := &cappedWriter{max: maxMetricsText}
	err := mw.WriteMetrics(w)
	if w.over {
		return nil, status.Error(codes.ResourceExhausted, ErrMetricsTooLarge.Error())
	}
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.MetricsResponse{Text: w.buf.Bytes()}, nil
}

// maxMetricsText is the most text a Metrics answer carries: the host's
// MaxMetricsBytes less the few bytes protobuf frames the field with.
const maxMetricsText = MaxMetricsBytes - 16

// cappedWriter refuses every write once max bytes would be passed. The
// host refuses a bigger answer anyway; without the cap a plugin with a
// label per document built, encoded and sent 60 MB on every scrape to be
// refused, and took over 2 s at it on a loaded machine, so the host
// logged it as hung.
type cappedWriter struct {
	buf  bytes.Buffer
	max  int
	over bool
}

func (w *cappedWriter) Write(p []byte) (int, error) {
	if w.over || w.buf.Len()+len(p) > w.max {
		w.over = true
		return 0, ErrMetricsTooLarge
	}
	return w.buf.Write(p)
}

type authServer struct {
	pb.UnimplementedAuthServer
	impl stage.Authenticator
}

func (s *authServer) Authenticate(ctx context.Context, req *pb.AuthenticateRequest) (*pb.AuthenticateResponse, error) {
	resp, err := s.impl.Authenticate(ctx, &stage.AuthenticateRequest{Token: req.GetToken()})
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	p := resp.Principal
	return &pb.AuthenticateResponse{Principal: &pb.Principal{UserId: p.UserID, KeyId: p.KeyID, Plan: planToPB(p.Plan)}}, nil
}

type meterServer struct {
	pb.UnimplementedMeterServer
	impl stage.Meter
}

func (s *meterServer) Reserve(ctx context.Context, req *pb.ReserveRequest) (*pb.ReserveResponse, error) {
	resp, err := s.impl.Reserve(ctx, &stage.ReserveRequest{
		UserID: req.GetUserId(), Credits: req.GetCredits(),
		IdempotencyKey: req.GetIdempotencyKey(), RequestHash: req.GetRequestHash(),
	})
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	out := &pb.ReserveResponse{ReservationId: resp.ReservationID, HeldMs: resp.Held.Milliseconds()}
	if resp.Replay != nil {
		out.Replay, out.ReplayResult = true, resp.Replay.Result
	}
	return out, nil
}

func (s *meterServer) Commit(ctx context.Context, req *pb.CommitRequest) (*pb.CommitResponse, error) {
	if _, err := s.impl.Commit(ctx, &stage.CommitRequest{ReservationID: req.GetReservationId(), Result: req.GetResult()}); err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.CommitResponse{}, nil
}

func (s *meterServer) Refund(ctx context.Context, req *pb.RefundRequest) (*pb.RefundResponse, error) {
	if _, err := s.impl.Refund(ctx, &stage.RefundRequest{ReservationID: req.GetReservationId(), Reason: req.GetReason()}); err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.RefundResponse{}, nil
}

func (s *meterServer) Account(ctx context.Context, req *pb.AccountRequest) (*pb.AccountResponse, error) {
	resp, err := s.impl.Account(ctx, &stage.AccountRequest{UserID: req.GetUserId()})
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.AccountResponse{UserId: resp.UserID, Plan: planToPB(resp.Plan),
		CurrentCredits: resp.CurrentCredits, LastReset: timeToPB(resp.LastReset)}, nil
}

type parseServer struct {
	pb.UnimplementedParseServer
	impl stage.Parser
}

func (s *parseServer) Parse(ctx context.Context, req *pb.ParseRequest) (*pb.ParseResponse, error) {
	resp, err := s.impl.Parse(ctx, &stage.ParseRequest{Markdown: req.GetMarkdown(), SkipHTML: req.GetSkipHtml()})
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	doc, err := docToPB(resp.Document)
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.ParseResponse{Document: doc}, nil
}

type styleServer struct {
	pb.UnimplementedStyleServer
	impl stage.Styler
}

func (s *styleServer) Style(ctx context.Context, req *pb.StyleRequest) (*pb.StyleResponse, error) {
	doc, err := docFromPB(req.GetDocument(), false)
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	resp, err := s.impl.Style(ctx, &stage.StyleRequest{
		Document: doc, Theme: req.GetTheme(), Page: pageFromPB(req.GetPage()),
		Numbering: stage.Numbering(req.GetNumbering()), Watermark: req.GetWatermark(), SkipHTML: req.GetSkipHtml(),
		Lang: req.GetLang(),
	})
	if err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.StyleResponse{Html: resp.HTML, Tokens: tokensToPB(resp.Tokens)}, nil
}

type renderServer struct {
	pb.UnimplementedRenderServer
	impl stage.Renderer
}

func (s *renderServer) Render(req *pb.RenderRequest, stream grpc.ServerStreamingServer[pb.RenderChunk]) error {
	ctx := stream.Context()
	doc, err := docFromPB(req.GetDocument(), false)
	if err != nil {
		return toStatus(ctx, err)
	}
	resp, err := s.impl.Render(ctx, &stage.RenderRequest{
		HTML: req.GetHtml(), Document: doc, Tokens: tokensFromPB(req.GetTokens()),
		Page: pageFromPB(req.GetPage()), Numbering: stage.Numbering(req.GetNumbering()), Watermark: req.GetWatermark(),
		Lang: req.GetLang(),
	})
	if err != nil {
		return toStatus(ctx, err)
	}
	return sendPDF(stream, resp)
}

// sendPDF streams a rendered PDF in chunks, the last one marked.
func sendPDF(stream interface{ Send(*pb.RenderChunk) error }, resp *stage.RenderResponse) error {
	data := resp.PDF
	for len(data) > chunkBytes {
		if err := stream.Send(&pb.RenderChunk{Data: data[:chunkBytes]}); err != nil {
			return err
		}
		data = data[chunkBytes:]
	}
	return stream.Send(&pb.RenderChunk{Data: data, Pages: int32(resp.Pages), Last: true})
}

type sinkServer struct {
	pb.UnimplementedSinkServer
	impl stage.Sink
}

func (s *sinkServer) Store(stream grpc.ClientStreamingServer[pb.StoreChunk, pb.StoreResponse]) error {
	ctx := stream.Context()
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	h := first.GetHeader()
	if h == nil {
		return toStatus(ctx, stage.Errorf(stage.CodeInvalid, "store stream must start with a header"))
	}
	pdf := make([]byte, 0, max(h.GetSize(), 0))
	pdf = append(pdf, first.GetData()...)
	for {
		c, err := stream.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		pdf = append(pdf, c.GetData()...)
	}
	resp, err := s.impl.Store(ctx, &stage.StoreRequest{
		Owner: h.GetOwner(), Filename: h.GetFilename(), PDF: pdf, TTL: time.Duration(h.GetTtlSeconds()) * time.Second,
	})
	if err != nil {
		return toStatus(ctx, err)
	}
	return stream.SendAndClose(&pb.StoreResponse{Id: resp.ID, Url: resp.URL, ExpiresAt: timeToPB(resp.ExpiresAt)})
}

// Delete deletes through a sink that is a stage.Deleter; one that is not
// answers Unimplemented, as a plugin built before Delete existed does.
func (s *sinkServer) Delete(ctx context.Context, req *pb.DeleteRequest) (*pb.DeleteResponse, error) {
	d, ok := s.impl.(stage.Deleter)
	if !ok {
		return s.UnimplementedSinkServer.Delete(ctx, req)
	}
	if err := d.Delete(ctx, &stage.DeleteRequest{ID: req.GetId()}); err != nil {
		return nil, toStatus(ctx, err)
	}
	return &pb.DeleteResponse{}, nil
}

func (s *sinkServer) Open(req *pb.OpenRequest, stream grpc.ServerStreamingServer[pb.OpenChunk]) error {
	ctx := stream.Context()
	resp, err := s.impl.Open(ctx, &stage.OpenRequest{ID: req.GetId(), Offset: req.GetOffset(), Length: req.GetLength()})
	if err != nil {
		return toStatus(ctx, err)
	}
	defer resp.Body.Close()
	info := &pb.OpenInfo{Size: resp.Size, Filename: resp.Filename, Etag: resp.ETag,
		Created: timeToPB(resp.Created), ExpiresAt: timeToPB(resp.ExpiresAt)}
	if err := stream.Send(&pb.OpenChunk{Info: info}); err != nil {
		return err
	}
	// The buffer is no larger than what is asked for: a metadata-only
	// Open (HEAD, resolving a Range) allocates none.
	want := resp.Size - req.GetOffset()
	if l := req.GetLength(); l >= 0 {
		want = min(want, l)
	}
	if want <= 0 {
		return nil
	}
	buf := make([]byte, min(int64(chunkBytes), want))
	for want > 0 {
		n, err := io.ReadFull(resp.Body, buf[:min(int64(len(buf)), want)])
		if n > 0 {
			if serr := stream.Send(&pb.OpenChunk{Data: buf[:n]}); serr != nil {
				return serr
			}
			want -= int64(n)
		}
		if err != nil {
			// A body that ends before the size the sink announced was cut
			// (an S3 connection dropped reads as io.ErrUnexpectedEOF):
			// ending the stream cleanly would pass the part for the whole.
			if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
				err = fmt.Errorf("body ended %d bytes short: %w", want, err)
			}
			return toStatus(ctx, stage.Wrap(stage.CodeInternal, err, "read hosted file"))
		}
	}
	return nil
}
