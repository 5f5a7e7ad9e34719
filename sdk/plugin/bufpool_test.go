package plugin

import (
	"testing"

	"google.golang.org/grpc/mem"
)

// A message between 32 KiB and 1 MiB takes a buffer of its own order, not
// a megabyte that is zeroed whole every time it is taken.
func TestBufferPoolTiers(t *testing.T) {
	pool := mem.DefaultBufferPool()
	for _, size := range []int{40 << 10, 63 << 10, 200 << 10, 700 << 10} {
		buf := pool.Get(size)
		if c := cap(*buf); c < size || c >= 2*size {
			t.Errorf("a %d KiB message gets a buffer of %d KiB", size>>10, c>>10)
		}
		pool.Put(buf)
	}
}
