package bucket

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// BenchmarkStore measures storing a 200 KiB PDF with a presigned URL.
func BenchmarkStore(b *testing.B) {
	s := configured(b, map[string]any{"delivery": DeliveryPresign})
	pdf := pattern(200 << 10)
	b.SetBytes(int64(len(pdf)))
	for b.Loop() {
		store(b, s, pdf, time.Hour)
	}
}

// BenchmarkOpen measures a proxied download of a 200 KiB PDF: HEAD, then a
// ranged GET read to the end.
func BenchmarkOpen(b *testing.B) {
	s := configured(b, map[string]any{"delivery": DeliveryProxy})
	pdf := pattern(200 << 10)
	id := store(b, s, pdf, time.Hour).ID
	b.SetBytes(int64(len(pdf)))
	for b.Loop() {
		resp, err := s.Open(context.Background(), &stage.OpenRequest{ID: id, Length: -1})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}
