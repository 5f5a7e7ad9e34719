package api

import (
	"net/http/httptest"
	"testing"
)

// TestEncodedRefusesOnlyTransformingCodings: a compressed body is told so;
// a charset put in Content-Encoding, with the JSON sent as it is, passes.
func TestEncodedRefusesOnlyTransformingCodings(t *testing.T) {
	for _, tc := range []struct {
		values []string
		refuse bool
	}{
		{nil, false},
		{[]string{"identity"}, false},
		{[]string{"utf-8"}, false},
		{[]string{"UTF-8"}, false},
		{[]string{"binary"}, false},
		{[]string{"gzip"}, true},
		{[]string{"GZip"}, true},
		{[]string{"x-gzip"}, true},
		{[]string{"identity, br"}, true},
		{[]string{"utf-8", "zstd"}, true},
		{[]string{" deflate "}, true},
	} {
		r := httptest.NewRequest("POST", "/v1/pdf/markdown", nil)
		for _, v := range tc.values {
			r.Header.Add("Content-Encoding", v)
		}
		if got := encoded(r) != nil; got != tc.refuse {
			t.Errorf("Content-Encoding %q: refused %v, want %v", tc.values, got, tc.refuse)
		}
	}
}
