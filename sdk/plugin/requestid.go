package plugin

import (
	"context"
	"log/slog"

	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

// requestIDMetadata carries the id of the HTTP request a stage call serves,
// the X-Request-Id its client was answered with, from the host to the
// plugin. A client quotes that id to support; without it in the plugins'
// lines, a plugin's account of a failure ("stage call failed", a document
// refused, a render stopped over memory) could not be told from its
// neighbours' under load.
const requestIDMetadata = "mdpress-request-id"

// maxRequestID bounds the id a plugin takes from its caller, which goes
// into every line it logs for the call.
const maxRequestID = 64

type requestIDKey struct{}

// WithRequestID returns ctx carrying id to the plugins that the stage calls
// made with it reach, where RequestID reads it and Logger's lines written
// with that call's context (log.InfoContext(ctx, ...)) carry it as
// "requestId". The host calls it for each HTTP request.
func WithRequestID(ctx context.Context, id string) context.Context {
	return metadata.AppendToOutgoingContext(ctx, requestIDMetadata, id)
}

// RequestID is the id of the HTTP request that the stage call of ctx
// serves, or "" outside a call made for one (Configure, Health, a metrics
// scrape).
func RequestID(ctx context.Context) string {
	id, _ := ctx.Value(requestIDKey{}).(string)
	return id
}

// withIncomingRequestID moves the caller's request id from the call's
// metadata into its context, for RequestID.
func withIncomingRequestID(ctx context.Context) context.Context {
	md, ok := metadata.FromIncomingContext(ctx)
	if !ok {
		return ctx
	}
	v := md.Get(requestIDMetadata)
	if len(v) == 0 || v[0] == "" || len(v[0]) > maxRequestID {
		return ctx
	}
	return context.WithValue(ctx, requestIDKey{}, v[0])
}

func requestIDUnary(ctx context.Context, req any, _ *grpc.UnaryServerInfo, handler grpc.UnaryHandler) (any, error) {
	return handler(withIncomingRequestID(ctx), req)
}

func requestIDStream(srv any, ss grpc.ServerStream, _ *grpc.StreamServerInfo, handler grpc.StreamHandler) error {
	return handler(srv, &requestIDServerStream{ServerStream: ss, ctx: withIncomingRequestID(ss.Context())})
}

type requestIDServerStream struct {
	grpc.ServerStream
	ctx context.Context
}

func (s *requestIDServerStream) Context() context.Context { return s.ctx }

// requestIDHandler adds the request id of a record's context to the record.
type requestIDHandler struct{ slog.Handler }

func (h requestIDHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := RequestID(ctx); id != "" {
		r = r.Clone()
		r.AddAttrs(slog.String("requestId", id))
	}
	return h.Handler.Handle(ctx, r)
}

func (h requestIDHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return requestIDHandler{h.Handler.WithAttrs(attrs)}
}

func (h requestIDHandler) WithGroup(name string) slog.Handler {
	return requestIDHandler{h.Handler.WithGroup(name)}
}
