package disk

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestOpenStreamsLargeFile reads a 50 MB file through Open and shows the
// heap does not grow with the file: the body streams from disk.
func TestOpenStreamsLargeFile(t *testing.T) {
	if testing.Short() {
		t.Skip("writes 50 MB")
	}
	const size = 50 << 20
	d := configured(t, t.TempDir(), newClock(), nil)
	id, want := storeRandom(t, d, size)

	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse

	resp, err := d.Open(context.Background(), &stage.OpenRequest{ID: id, Length: -1})
	if err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	buf := make([]byte, 64<<10)
	var peak uint64
	var read int64
	for {
		n, err := resp.Body.Read(buf)
		h.Write(buf[:n])
		read += int64(n)
		if read%(8<<20) < int64(n) { // sample about every 8 MiB
			runtime.ReadMemStats(&ms)
			peak = max(peak, ms.HeapInuse)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	resp.Body.Close()
	runtime.ReadMemStats(&ms)
	peak = max(peak, ms.HeapInuse)

	if read != size || !bytes.Equal(h.Sum(nil), want[:]) {
		t.Fatalf("read %d bytes, hash mismatch or short", read)
	}
	growth := int64(peak) - int64(base)
	t.Logf("heap in use grew by %d KiB while streaming %d MiB", growth>>10, size>>20)
	if growth > 4<<20 {
		t.Fatalf("heap grew by %d MiB reading a %d MiB file: not streamed", growth>>20, size>>20)
	}
}

// storeRandom stores size random bytes; the slice dies with this frame, so
// the caller measures a heap without it.
func storeRandom(t *testing.T, d *Disk, size int) (string, [32]byte) {
	pdf := make([]byte, size)
	rand.NewChaCha8([32]byte{1}).Read(pdf)
	return store(t, d, pdf, time.Hour).ID, sha256.Sum256(pdf)
}
