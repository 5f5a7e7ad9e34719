package bucket

import (
	"testing"
	"time"
)

func TestContentDisposition(t *testing.T) {
	tests := map[string]string{
		"Report.pdf":        `inline; filename=Report.pdf`,
		`My "best".pdf`:     `inline; filename="My \"best\".pdf"`,
		"été.pdf":           `inline; filename=ete.pdf; filename*=utf-8''%C3%A9t%C3%A9.pdf`,
		"../../etc/x.pdf":   `inline; filename=.._.._etc_x.pdf`,
		"a\r\nSet-Cookie:x": `inline; filename="a__Set-Cookie:x"`,
		"":                  `inline; filename=document.pdf`,
	}
	for in, want := range tests {
		if got := contentDisposition(in); got != want {
			t.Errorf("contentDisposition(%q) = %s, want %s", in, got, want)
		}
	}
}

func TestMetaRoundTrip(t *testing.T) {
	in := meta{
		OwnerDigest: ownerDigest("0d63704538027d4701dce470c1545211", "usr_ünïcode/1"),
		Filename:    "Q3 report: 50% \"final\".pdf",
		Created:     time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC),
		Expires:     time.Date(2026, 1, 9, 3, 4, 5, 6, time.UTC),
		SHA256:      "ab",
	}
	enc := in.encode()
	for k, v := range enc {
		for _, r := range v {
			if r < 0x20 || r > 0x7e {
				t.Fatalf("metadata %s=%q is not printable ASCII, which HTTP headers need", k, v)
			}
		}
	}
	out, err := decodeMeta(enc)
	if err != nil || out != in {
		t.Fatalf("round trip: %+v, %v; want %+v", out, err, in)
	}
	if _, err := decodeMeta(map[string]string{}); err == nil {
		t.Fatal("metadata without an expiry accepted")
	}
}
