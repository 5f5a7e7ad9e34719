// Package plugin connects stage implementations to hashicorp/go-plugin over
// gRPC. A plugin author calls Serve from main; the host launches the binary
// and receives a *Client whose stage methods implement the very interfaces of
// package stage, so the pipeline cannot tell a plugin process from an
// in-process implementation.
//
// Errors keep their stage.Code across the wire: a server adapter turns a
// *stage.Error into a gRPC status carrying the code and the safe message, and
// the client adapter turns it back. Large payloads (PDFs) travel as chunked
// streams, and message limits are raised on both sides for the rest.
package plugin
