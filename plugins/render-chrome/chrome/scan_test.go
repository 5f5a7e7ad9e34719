package chrome

import (
	"encoding/base64"
	"fmt"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/plugins/internal/threadcpu"
	"github.com/mdpress/mdpress/sdk/stage"
)

// TestScanDataImages: a data: image over the bounds is found wherever the
// document writes it, escaped or not, and an SVG image's own data: images
// too; small images and text that only looks like one pass.
func TestScanDataImages(t *testing.T) {
	bomb := base64.StdEncoding.EncodeToString(pngHeader(19000, 19000))
	small := base64.StdEncoding.EncodeToString(pngHeader(64, 64))
	svgWith := func(b64 string) string {
		return `<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="10" height="10"><image width="10" height="10" xlink:href="data:image/png;base64,` + b64 + `"/></svg>`
	}
	cssEscaped := func(s string) string { // every character as a CSS hex escape
		var b strings.Builder
		for _, c := range s {
			fmt.Fprintf(&b, `\%x `, c)
		}
		return b.String()
	}
	tests := []struct {
		name, doc string
		refused   bool
	}{
		{"print-only background", `<style>@media print { .b { background-image: url(data:image/png;base64,` + bomb + `) } }</style><div class="b">x</div>`, true},
		{"page background", `<style>@page { background: url("data:image/png;base64,` + bomb + `") }</style>`, true},
		{"generated content", `<style>@media print { p::before { content: url('data:image/png;base64,` + bomb + `') } }</style><p>x</p>`, true},
		{"hidden image", `<img style="display:none" src="data:image/png;base64,` + bomb + `">`, true},
		{"upper case", `<img src="DATA:IMAGE/PNG;BASE64,` + bomb + `">`, true},
		{"css escapes", `<style>div { background: url(` + cssEscaped("data:image/png;base64,"+bomb) + `) }</style>`, true},
		{"character references in a style attribute", `<div style="background: url(data&colon;image/png;base64,` + bomb + `)"></div>`, true},
		{"references to css escapes", `<div style="background: url(&#92;64 ata:image/png;base64,` + bomb + `)"></div>`, true},
		{"tab in the scheme", "<picture><source media=\"print\" srcset=\"da\tta:image/png;base64," + bomb + "\"><img src=\"x.png\"></picture>", true},
		{"newline references in the scheme", `<picture><source media="print" srcset="d&NewLine;ata:image/png;base64,` + bomb + ` 1x"><img src="x.png"></picture>`, true},
		{"base64 across lines", `<img src="data:image/png;base64,` + bomb[:20] + "\n  " + bomb[20:] + `">`, true},
		{"svg holding a png", `<img src="data:image/svg+xml;base64,` + base64.StdEncoding.EncodeToString([]byte(svgWith(bomb))) + `">`, true},
		{"svg percent-encoded", `<img src="data:image/svg+xml,` + url.PathEscape(svgWith(bomb)) + `">`, true},
		{"imported style sheet", `<style>@import url(data:text/css;base64,` + base64.StdEncoding.EncodeToString([]byte(`@media print { body { background: url(data:image/png;base64,`+bomb+`) } }`)) + `);</style>`, true},
		{"linked style sheet", `<link rel="stylesheet" href="data:text/css,` + url.PathEscape(`@page { background: url("data:image/png;base64,`+bomb+`") }`) + `">`, true},
		{"print-only images over the document's bound", `<style>@media print {` + sixThousand(3) + `}</style>`, true},
		{"one image written many times", `<style>@media print {` + strings.Repeat(`p { background: url(data:image/png;base64,`+base64.StdEncoding.EncodeToString(pngHeader(6000, 6000))+`) }`, 5) + `}</style>`, false},
		{"css tab escape in the scheme", `<style>@media print { p { background: url(d\9 ata:image/png;base64,` + bomb + `) } }</style>`, true},
		{"brackets in a quoted payload", `<style>@page { background: url("data:image/png,` + percentExcept(pngHeader(19000, 19000), "<>()'") + `") }</style>`, true},
		{"a quote as a character reference in the payload", `<img style="display:none" src="data:image/png,` + strings.ReplaceAll(percentExcept(pngHeader(19000, 19000), `"`), `"`, "&quot;") + `">`, true},
		{"small image", `<img src="data:image/png;base64,` + small + `"><style>@page { background: url(data:image/png;base64,` + small + `) }</style>`, false},
		{"svg holding a small png", `<img src="data:image/svg+xml;base64,` + base64.StdEncoding.EncodeToString([]byte(svgWith(small))) + `">`, false},
		{"prose", `<p>The data: URL scheme, as in data:text/plain,hello, and data:image/png;base64,notanimage.</p>`, false},
		{"no comma", `<p>data:image/png;base64` + bomb + `</p>`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := scanDataImages(tt.doc)
			if !tt.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			if stage.CodeOf(err) != stage.CodeTooLarge {
				t.Fatalf("err %v, want too large", err)
			}
			if msg := stage.SafeMessage(err); !strings.Contains(msg, "19000x19000") && !strings.Contains(msg, "in all") {
				t.Errorf("message %q does not give the size", msg)
			}
		})
	}
}

// sixThousand writes n distinct print-only backgrounds of 6000x6000
// pixels, 36M each: under the bound on one image.
func sixThousand(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, ".c%d { background: url(data:image/png;base64,%s) }", i,
			base64.StdEncoding.EncodeToString(append(pngHeader(6000, 6000), byte(i))))
	}
	return b.String()
}

// TestScanDataImagesLinear: text made to make the scan search again and
// again costs it in proportion to its length: four times the text takes
// about four times as long, where a quadratic scan would take sixteen.
// The best of three runs of each size, in the thread's CPU, is compared,
// so that a busy machine does not decide.
func TestScanDataImagesLinear(t *testing.T) {
	shapes := map[string]func(n int) string{
		"data: without an end": func(n int) string { return strings.Repeat("data:", n/5) },
		"data: with ends":      func(n int) string { return strings.Repeat("data:,)", n/7) },
		"escapes":              func(n int) string { return strings.Repeat(`\64 ata:,)`, n/10) },
		"cut images":           func(n int) string { return strings.Repeat(`"data:image/png;base64,AAAA" `, n/29) },
		"nested svg": func(n int) string {
			unit := "data:image/svg+xml," + url.PathEscape(strings.Repeat("data:image/svg+xml,x)", 100)) + ")"
			return strings.Repeat(unit, n/len(unit))
		},
	}
	// In the thread's CPU: on the wall, a loaded CI run took 10.5x as
	// long for 4x the text, the large run's time spent waiting for a core.
	now, release := threadcpu.Clock()
	defer release()
	best := func(doc string) time.Duration {
		var min time.Duration
		for range 3 {
			start := now()
			if err := scanDataImages(doc); err != nil {
				t.Fatal(err)
			}
			if d := now() - start; min == 0 || d < min {
				min = d
			}
		}
		return min
	}
	for name, shape := range shapes {
		small, large := best(shape(256<<10)), best(shape(1<<20))
		if ratio := float64(large) / float64(max(small, time.Microsecond)); ratio > 10 {
			t.Errorf("%s: 4x the text took %.1fx as long (%v, %v)", name, ratio, small, large)
		}
	}
}

func TestCSSUnescape(t *testing.T) {
	for in, want := range map[string]string{
		`\64 ata`:    "data",
		`\000064ata`: "data",
		`d\a`:        "d\n",
		`\"`:         `"`,
		"a\\\nb":     "ab",
		`\110000`:    "\uFFFD",
		`\0`:         "\uFFFD",
		`end\`:       `end\`,
	} {
		if got := cssUnescape(in); got != want {
			t.Errorf("cssUnescape(%q) = %q, want %q", in, got, want)
		}
	}
}

// percentExcept percent-encodes b but for the bytes in keep.
func percentExcept(b []byte, keep string) string {
	var s strings.Builder
	for _, c := range b {
		if strings.IndexByte(keep, c) >= 0 {
			s.WriteByte(c)
			continue
		}
		fmt.Fprintf(&s, "%%%02X", c)
	}
	return s.String()
}
