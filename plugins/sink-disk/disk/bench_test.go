package disk

import (
	"context"
	"io"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// BenchmarkStore measures one durable store (two fsynced writes and two
// directory fsyncs) of a 200 KiB PDF.
func BenchmarkStore(b *testing.B) {
	d := configured(b, b.TempDir(), newClock(), nil)
	pdf := pattern(200 << 10)
	b.SetBytes(int64(len(pdf)))
	for b.Loop() {
		store(b, d, pdf, time.Hour)
	}
}

// BenchmarkOpen measures opening and reading a 200 KiB PDF.
func BenchmarkOpen(b *testing.B) {
	d := configured(b, b.TempDir(), newClock(), nil)
	pdf := pattern(200 << 10)
	id := store(b, d, pdf, time.Hour).ID
	b.SetBytes(int64(len(pdf)))
	for b.Loop() {
		resp, err := d.Open(context.Background(), &stage.OpenRequest{ID: id, Length: -1})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
	}
}
