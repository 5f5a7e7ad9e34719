package plugin

import (
	"context"
	"errors"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"io"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"

	"github.com/mdpress/mdpress/sdk/internal/pb"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Client is the host's handle on one plugin process. It implements
// stage.Plugin and every stage interface; calling a stage the plugin does not
// serve fails with an internal error.
type Client struct {
	stage  string
	conn   *grpc.ClientConn
	base   pb.PluginClient
	auth   pb.AuthClient
	meter  pb.MeterClient
	parse  pb.ParseClient
	style  pb.StyleClient
	render pb.RenderClient
	sink   pb.SinkClient
	relay  bool
}

func newClient(stageName string, conn *grpc.ClientConn) *Client {
	return &Client{
		stage: stageName, conn: conn,
		base: pb.NewPluginClient(conn), auth: pb.NewAuthClient(conn), meter: pb.NewMeterClient(conn),
		parse: pb.NewParseClient(conn), style: pb.NewStyleClient(conn), render: pb.NewRenderClient(conn),
		sink: pb.NewSinkClient(conn),
	}
}

// NewClient wraps an existing gRPC connection to a plugin that serves
// stageName. The host gets its clients from go-plugin; this is for tests and
// for tools that reach a plugin another way.
func NewClient(stageName string, conn *grpc.ClientConn) *Client { return newClient(stageName, conn) }

// RelayTrees makes Parse return the document tree undecoded, in
// Document.Encoded with Root nil, for a caller that passes it on to other
// plugins without reading it: the host saves decoding and re-encoding every
// tree. Call it before the client is used.
func (c *Client) RelayTrees() { c.relay = true }

// Stage names the stage the plugin serves.
func (c *Client) Stage() string { return c.stage }

// Connected reports whether the connection to the plugin is up, as gRPC
// last saw it, without a system call. gRPC sees it drop when the plugin's
// end closes, so a host that took the client a while before a call asks
// for a live one again when it is not: the plugin died meanwhile.
func (c *Client) Connected() bool { return c.conn.GetState() == connectivity.Ready }

func (c *Client) Configure(ctx context.Context, req *stage.ConfigureRequest) (*stage.ConfigureResponse, error) {
	in := &pb.ConfigureRequest{Config: req.Config, DataDir: req.DataDir, PublicUrl: req.PublicURL,
		AccountsDriver: req.Accounts.Driver, AccountsDsn: req.Accounts.DSN}
	for _, p := range req.Plans {
		in.Plans = append(in.Plans, planToPB(p))
	}
	out, err := c.base.Configure(ctx, in)
	if err != nil {
		return nil, fromStatus(err)
	}
	return &stage.ConfigureResponse{Info: stage.Info{Name: out.Name, Version: out.Version, Capabilities: out.Capabilities}}, nil
}

func (c *Client) Health(ctx context.Context) error {
	_, err := c.base.Health(ctx, &pb.HealthRequest{})
	return fromStatus(err)
}

// MaxMetricsBytes bounds a plugin's answer to the Metrics call, far above
// the few KiB of a plugin's own families (a Go runtime's are ~50 KiB). The
// host parses the answer into /metrics on every scrape: a plugin that put a
// label per document on a family answered 60 MB, and each scrape then took
// ~9 s and 1.7 GB of the host's memory, past Prometheus's scrape timeout.
const MaxMetricsBytes = 2 << 20

// ErrMetricsTooLarge is the error of a Metrics call whose answer is over
// MaxMetricsBytes.
var ErrMetricsTooLarge = errors.New("metrics answer over 2 MiB")

// Metrics returns the plugin's own metric families in the text format.
func (c *Client) Metrics(ctx context.Context) ([]byte, error) {
	out, err := c.base.Metrics(ctx, &pb.MetricsRequest{}, grpc.MaxCallRecvMsgSize(MaxMetricsBytes))
	if status.Code(err) == codes.ResourceExhausted {
		return nil, ErrMetricsTooLarge
	}
	if err != nil {
		return nil, fromStatus(err)
	}
	return out.Text, nil
}

// Close does nothing: the host ends the process through go-plugin.
func (c *Client) Close() error { return nil }

func (c *Client) Authenticate(ctx context.Context, req *stage.AuthenticateRequest) (*stage.AuthenticateResponse, error) {
	out, err := c.auth.Authenticate(ctx, &pb.AuthenticateRequest{Token: req.Token})
	if err != nil {
		return nil, fromStatus(err)
	}
	p := out.GetPrincipal()
	return &stage.AuthenticateResponse{Principal: stage.Principal{UserID: p.GetUserId(), KeyID: p.GetKeyId(), Plan: planFromPB(p.GetPlan())}}, nil
}

func (c *Client) Reserve(ctx context.Context, req *stage.ReserveRequest) (*stage.ReserveResponse, error) {
	out, err := c.meter.Reserve(ctx, &pb.ReserveRequest{UserId: req.UserID, Credits: req.Credits,
		IdempotencyKey: req.IdempotencyKey, RequestHash: req.RequestHash})
	if err != nil {
		return nil, fromStatus(err)
	}
	resp := &stage.ReserveResponse{ReservationID: out.ReservationId, Held: time.Duration(out.HeldMs) * time.Millisecond}
	if out.Replay {
		resp.Replay = &stage.Replay{Result: out.ReplayResult}
	}
	return resp, nil
}

func (c *Client) Commit(ctx context.Context, req *stage.CommitRequest) (*stage.CommitResponse, error) {
	if _, err := c.meter.Commit(ctx, &pb.CommitRequest{ReservationId: req.ReservationID, Result: req.Result}); err != nil {
		return nil, fromStatus(err)
	}
	return &stage.CommitResponse{}, nil
}

func (c *Client) Refund(ctx context.Context, req *stage.RefundRequest) (*stage.RefundResponse, error) {
	if _, err := c.meter.Refund(ctx, &pb.RefundRequest{ReservationId: req.ReservationID, Reason: req.Reason}); err != nil {
		return nil, fromStatus(err)
	}
	return &stage.RefundResponse{}, nil
}

func (c *Client) Account(ctx context.Context, req *stage.AccountRequest) (*stage.AccountResponse, error) {
	out, err := c.meter.Account(ctx, &pb.AccountRequest{UserId: req.UserID})
	if err != nil {
		return nil, fromStatus(err)
	}
	return &stage.AccountResponse{UserID: out.UserId, Plan: planFromPB(out.GetPlan()),
		CurrentCredits: out.CurrentCredits, LastReset: timeFromPB(out.LastReset)}, nil
}

func (c *Client) Parse(ctx context.Context, req *stage.ParseRequest) (*stage.ParseResponse, error) {
	out, err := c.parse.Parse(ctx, &pb.ParseRequest{Markdown: req.Markdown, SkipHtml: req.SkipHTML})
	if err != nil {
		return nil, fromStatus(err)
	}
	doc, err := docFromPB(out.GetDocument(), c.relay)
	if err != nil {
		return nil, stage.Wrap(stage.CodeInternal, err, "internal error")
	}
	return &stage.ParseResponse{Document: doc}, nil
}

func (c *Client) Style(ctx context.Context, req *stage.StyleRequest) (*stage.StyleResponse, error) {
	doc, err := docToPB(req.Document)
	if err != nil {
		return nil, stage.Wrap(stage.CodeInternal, err, "internal error")
	}
	out, err := c.style.Style(ctx, &pb.StyleRequest{Document: doc, Theme: req.Theme,
		Page: pageToPB(req.Page), Numbering: string(req.Numbering), Watermark: req.Watermark, SkipHtml: req.SkipHTML,
		Lang: req.Lang})
	if err != nil {
		return nil, fromStatus(err)
	}
	return &stage.StyleResponse{HTML: out.Html, Tokens: tokensFromPB(out.GetTokens())}, nil
}

func (c *Client) Render(ctx context.Context, req *stage.RenderRequest) (*stage.RenderResponse, error) {
	doc, err := docToPB(req.Document)
	if err != nil {
		return nil, stage.Wrap(stage.CodeInternal, err, "internal error")
	}
	// Cancelling the call once the last chunk is in spares waiting for its
	// status: on a loopback socket that wait is another wake-up of both
	// processes, a fifth of a millisecond on a busy machine.
	sctx, cancel := context.WithCancel(ctx)
	defer cancel()
	stream, err := c.render.Render(sctx, &pb.RenderRequest{Html: req.HTML, Document: doc,
		Tokens: tokensToPB(req.Tokens), Page: pageToPB(req.Page), Numbering: string(req.Numbering), Watermark: req.Watermark,
		Lang: req.Lang})
	if err != nil {
		return nil, fromStatus(err)
	}
	return receivePDF(stream)
}

func (c *Client) Store(ctx context.Context, req *stage.StoreRequest) (*stage.StoreResponse, error) {
	stream, err := c.sink.Store(ctx)
	if err != nil {
		return nil, fromStatus(err)
	}
	header := &pb.StoreHeader{Owner: req.Owner, Filename: req.Filename,
		TtlSeconds: int64(req.TTL.Seconds()), Size: int64(len(req.PDF))}
	data := req.PDF
	first := true
	for first || len(data) > 0 {
		n := min(len(data), chunkBytes)
		msg := &pb.StoreChunk{Data: data[:n]}
		if first {
			msg.Header, first = header, false
		}
		if err := stream.Send(msg); err != nil {
			// The server's reason arrives through CloseAndRecv.
			break
		}
		data = data[n:]
	}
	out, err := stream.CloseAndRecv()
	if err != nil {
		return nil, fromStatus(err)
	}
	return &stage.StoreResponse{ID: out.Id, URL: out.Url, ExpiresAt: timeFromPB(out.ExpiresAt)}, nil
}

// Delete asks the sink to delete a file. A plugin whose sink is not a
// stage.Deleter, or that was built before Delete existed, answers
// Unimplemented: errors.ErrUnsupported here, and its files expire as they
// always did.
func (c *Client) Delete(ctx context.Context, req *stage.DeleteRequest) error {
	_, err := c.sink.Delete(ctx, &pb.DeleteRequest{Id: req.ID})
	if status.Code(err) == codes.Unimplemented {
		return errors.ErrUnsupported
	}
	if err != nil {
		return fromStatus(err)
	}
	return nil
}

// Open starts streaming the file; the response's Body reads the chunks as
// they arrive, so a large file never sits whole in the host's memory.
func (c *Client) Open(ctx context.Context, req *stage.OpenRequest) (*stage.OpenResponse, error) {
	ctx, cancel := context.WithCancel(ctx)
	stream, err := c.sink.Open(ctx, &pb.OpenRequest{Id: req.ID, Offset: req.Offset, Length: req.Length})
	if err != nil {
		cancel()
		return nil, fromStatus(err)
	}
	first, err := stream.Recv()
	if err != nil {
		cancel()
		return nil, fromStatus(err)
	}
	info := first.GetInfo()
	return &stage.OpenResponse{
		Size: info.GetSize(), Filename: info.GetFilename(), ETag: info.GetEtag(),
		Created: timeFromPB(info.GetCreated()), ExpiresAt: timeFromPB(info.GetExpiresAt()),
		Body: &chunkReader{stream: stream, cancel: cancel},
	}, nil
}

type chunkReader struct {
	stream grpc.ServerStreamingClient[pb.OpenChunk]
	cancel context.CancelFunc
	buf    []byte
	err    error
}

func (r *chunkReader) Read(p []byte) (int, error) {
	for len(r.buf) == 0 {
		if r.err != nil {
			return 0, r.err
		}
		chunk, err := r.stream.Recv()
		if err != nil {
			if errors.Is(err, io.EOF) {
				r.err = io.EOF
			} else {
				r.err = fromStatus(err)
			}
			continue
		}
		r.buf = chunk.Data
	}
	n := copy(p, r.buf)
	r.buf = r.buf[n:]
	return n, nil
}

func (r *chunkReader) Close() error {
	r.cancel()
	return nil
}

var (
	_ stage.Plugin        = (*Client)(nil)
	_ stage.Authenticator = (*Client)(nil)
	_ stage.Meter         = (*Client)(nil)
	_ stage.Parser        = (*Client)(nil)
	_ stage.Styler        = (*Client)(nil)
	_ stage.Renderer      = (*Client)(nil)
	_ stage.Sink          = (*Client)(nil)
)
