package plugin

import (
	goplugin "github.com/hashicorp/go-plugin"
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

// chunkBytes is the size of one chunk of a streamed PDF.
const chunkBytes = 1 << 20

// Map returns the go-plugin plugin map for the host side of a stage.
func Map(stageName string) map[string]goplugin.Plugin {
	return map[string]goplugin.Plugin{stageName: &grpcPlugin{stage: stageName}}
}
