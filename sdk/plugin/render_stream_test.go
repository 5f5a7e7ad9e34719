package plugin

import (
	"bytes"
	"context"
	"net"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/mdpress/mdpress/sdk/internal/pb"
	"github.com/mdpress/mdpress/sdk/stage"
)

// heldRenderer sends its chunks, then holds the call open until released,
// as a plugin whose status is slow to follow the PDF.
type heldRenderer struct {
	pb.UnimplementedRenderServer
	chunks  []*pb.RenderChunk
	release chan struct{}
}

func (h *heldRenderer) Render(_ *pb.RenderRequest, stream grpc.ServerStreamingServer[pb.RenderChunk]) error {
	for _, c := range h.chunks {
		if err := stream.Send(c); err != nil {
			return err
		}
	}
	select {
	case <-h.release:
	case <-stream.Context().Done():
	}
	return nil
}

// dialRenderer serves r on a Unix socket and returns a client of it.
func dialRenderer(t *testing.T, r pb.RenderServer) *Client {
	t.Helper()
	return dialWith(t, stage.NameRender, func(s *grpc.Server) { pb.RegisterRenderServer(s, r) })
}

// dialWith serves what register registers on a Unix socket and returns a
// client of it for stageName.
func dialWith(t *testing.T, stageName string, register func(*grpc.Server)) *Client {
	t.Helper()
	l, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	s := grpc.NewServer()
	register(s)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(s.Stop)
	conn, err := grpc.NewClient("unix://"+l.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return NewClient(stageName, conn)
}

// TestRenderReturnsAtLastChunk: the host has the PDF as soon as the chunk
// marked last arrives, without waiting for the call's status; and a plugin
// that does not mark its last chunk is read to the end of its stream.
func TestRenderReturnsAtLastChunk(t *testing.T) {
	t.Run("marked", func(t *testing.T) {
		h := &heldRenderer{release: make(chan struct{}), chunks: []*pb.RenderChunk{
			{Data: []byte("%PDF-1.7 ")}, {Data: []byte("rest"), Pages: 3, Last: true},
		}}
		defer close(h.release)
		c := dialRenderer(t, h)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		resp, err := c.Render(ctx, &stage.RenderRequest{})
		if err != nil {
			t.Fatalf("render: %v (waited for the status of a call whose PDF was complete)", err)
		}
		if !bytes.Equal(resp.PDF, []byte("%PDF-1.7 rest")) || resp.Pages != 3 {
			t.Fatalf("got %q, %d pages", resp.PDF, resp.Pages)
		}
	})
	t.Run("unmarked", func(t *testing.T) {
		h := &heldRenderer{release: make(chan struct{}), chunks: []*pb.RenderChunk{
			{Data: []byte("%PDF-1.7 ")}, {Data: []byte("rest"), Pages: 3}, {Data: []byte(" more")},
		}}
		close(h.release)
		c := dialRenderer(t, h)
		resp, err := c.Render(context.Background(), &stage.RenderRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(resp.PDF, []byte("%PDF-1.7 rest more")) || resp.Pages != 3 {
			t.Fatalf("got %q, %d pages", resp.PDF, resp.Pages)
		}
	})
}
