package chrome

import (
	"encoding/base64"
	"strings"
	"testing"
	"time"
)

// FuzzScanDataImages: the scan of a document's data: images ends quickly
// and without a panic whatever the document holds, and refuses only with
// the too-large error a client may see.
func FuzzScanDataImages(f *testing.F) {
	png := "data:image/png;base64," + base64.StdEncoding.EncodeToString(pngHeader(100000, 100000))
	for _, s := range []string{
		`<img src="` + png + `">`,
		`<div style="background:url(` + png + `)">`,
		`<style>@page { background: url("da\74 a:image/png;base64,` + png[len("data:image/png;base64,"):] + `") }</style>`,
		`<img src="&#100;ata:image/png;base64,AAAA">`,
		`<img srcset="` + png + ` 2x, data:,x 1x">`,
		`<link href="data:text/css,@import%20url(data:text/css,body%7Bbackground:url(` + png + `)%7D)">`,
		"da\tta:image/gif;base64,R0lGODlh//8AAA==",
		strings.Repeat("data:,", 50),
		strings.Repeat("data:image/png;base64,%", 20),
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, doc string) {
		start := time.Now()
		err := scanDataImages(doc)
		if took := time.Since(start); took > time.Second {
			t.Errorf("%d bytes scanned in %v", len(doc), took)
		}
		if err != nil && !strings.Contains(err.Error(), "pixels") && !strings.Contains(err.Error(), "image") {
			t.Fatalf("unexpected error: %v", err)
		}
	})
}
