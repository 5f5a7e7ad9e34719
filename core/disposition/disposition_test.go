package disposition

import (
	"mime"
	"strings"
	"testing"
)

// TestInline: every name reads back whole through filename* (Go's parser,
// like browsers, prefers it), and filename alone, what curl -OJ reads, is
// a printable ASCII name ending in .pdf.
func TestInline(t *testing.T) {
	tests := []struct {
		name, ascii string
	}{
		{"Report.pdf", "Report.pdf"},
		{"Quarterly Report.pdf", "Quarterly Report.pdf"},
		{"Über Straße.pdf", "Uber Stra_e.pdf"},
		{"Café résumé.pdf", "Cafe resume.pdf"},
		{"日本語のタイトル.pdf", "document.pdf"},
		{"Q3 — 数字.pdf", "Q3 _ _.pdf"},
		{"a \"q\" ;x.pdf", "a \"q\" ;x.pdf"},
		{"", "document.pdf"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := Inline(tt.name)
			typ, params, err := mime.ParseMediaType(v)
			if err != nil || typ != "inline" {
				t.Fatalf("%q: %q %v", v, typ, err)
			}
			want := tt.name
			if want == "" {
				want = Default
			}
			if params["filename"] != want {
				t.Errorf("%q reads as %q, want %q", v, params["filename"], want)
			}
			// Without filename*, a client reads the fallback.
			plain := v
			if i := strings.Index(v, "; filename*="); i >= 0 {
				plain = v[:i]
			}
			_, params, err = mime.ParseMediaType(plain)
			if err != nil || params["filename"] != tt.ascii {
				t.Errorf("%q: filename %q (%v), want %q", v, params["filename"], err, tt.ascii)
			}
		})
	}
}
