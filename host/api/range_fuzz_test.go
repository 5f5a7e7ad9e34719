package api

import "testing"

// FuzzParseRange: a Range header the server serves names bytes of the
// file, never before its start nor past its end, whatever the header and
// the size.
func FuzzParseRange(f *testing.F) {
	for _, h := range []string{"bytes=0-0", "bytes=-5", "bytes=5-", "bytes=9-3", "bytes=0-99999999999999999999999",
		"bytes=-0", "bytes= 1 - 2 ", "bytes=1-2,3-4", "items=0-1", "bytes=-", "bytes=+1-2", "bytes=99999999999999999999-"} {
		f.Add(h, int64(10))
		f.Add(h, int64(0))
	}
	f.Fuzz(func(t *testing.T, h string, size int64) {
		if size < 0 {
			size = -(size + 1)
		}
		start, n, valid, ok := parseRange(h, size)
		if ok && (!valid || start < 0 || n < 1 || start > size-n) {
			t.Fatalf("parseRange(%q, %d) = %d+%d, valid %v", h, size, start, n, valid)
		}
	})
}
