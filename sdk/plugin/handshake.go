package plugin

import (
	goplugin "github.com/hashicorp/go-plugin"
	"google.golang.org/grpc"
)

// Handshake is the go-plugin handshake every mdpress plugin answers. The
// cookie only keeps a plugin binary from being run by hand by mistake; it is
// no security measure.
var Handshake = goplugin.HandshakeConfig{
	ProtocolVersion:  1,
	MagicCookieKey:   "MDPRESS_PLUGIN",
	MagicCookieValue: "d5b7c9a4-mdpress-stage-plugin",
}

// MaxMessageBytes bounds one gRPC message in either direction. PDFs travel
// in chunks, but a styled HTML document or a document tree of a very long
// Markdown file crosses in one message.
const MaxMessageBytes = 256 << 20

// WindowBytes is the HTTP/2 flow-control window, per stream and per
// connection, that hosts and plugins give each other. Set, it replaces
// gRPC's dynamic window, which estimates bandwidth by answering the data of
// every call with a window update and a ping that the other side must
// acknowledge: four system calls and two wake-ups per call that a local
// socket, with no bandwidth to estimate, does not need (over the seven
// processes of a one-page conversion: reads 48 -> 33, writes 22 -> 12,
// epoll waits 46 -> 32, futex calls 44 -> 35). One chunk: calls' messages are
// smaller, and a streamed download holds at most a chunk not yet taken by
// its HTTP client (host RSS +14 MiB streaming 50 MB to a slow client, where
// 4 MiB gave +21-25 MiB and the dynamic window +11-19 MiB).
const WindowBytes = chunkBytes

// chunkBytes is the size of one chunk of a streamed PDF.
const chunkBytes = 1 << 20

// DialOptions are the gRPC options a host dials a plugin with: the
// message bound and the window Serve sets on the plugin's side.
func DialOptions() []grpc.DialOption {
	return []grpc.DialOption{
		grpc.WithDefaultCallOptions(grpc.MaxCallRecvMsgSize(MaxMessageBytes), grpc.MaxCallSendMsgSize(MaxMessageBytes)),
		grpc.WithInitialWindowSize(WindowBytes), grpc.WithInitialConnWindowSize(WindowBytes),
	}
}

// Map returns the go-plugin plugin map for the host side of a stage.
func Map(stageName string) map[string]goplugin.Plugin {
	return map[string]goplugin.Plugin{stageName: &grpcPlugin{stage: stageName}}
}
