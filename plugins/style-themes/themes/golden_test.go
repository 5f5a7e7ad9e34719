package themes

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

var update = flag.Bool("update", false, "rewrite the golden files from the styler's output")

// TestGolden styles testdata/sample.html with each theme (A5, centred
// numbers, a watermark, which the HTML does not show: the renderer draws
// it) and compares the whole document with testdata/<theme>.golden.html.
func TestGolden(t *testing.T) {
	sample, err := os.ReadFile(filepath.Join("testdata", "sample.html"))
	if err != nil {
		t.Fatal(err)
	}
	s := New(nil)
	for _, theme := range []string{"modern", "basic"} {
		t.Run(theme, func(t *testing.T) {
			got := style(t, s, &stage.StyleRequest{
				Document:  stage.Document{HTML: string(sample), Title: "Quarterly report & <notes>"},
				Theme:     theme,
				Page:      mustPage(t, "A5"),
				Numbering: stage.NumberingCenter,
				Watermark: "SAMPLE",
			})
			golden := filepath.Join("testdata", theme+".golden.html")
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (go test -update creates it)", err)
			}
			if got != string(want) {
				g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
				for i := range max(len(g), len(w)) {
					if i >= len(g) || i >= len(w) || g[i] != w[i] {
						t.Fatalf("%s differs at line %d (go test -update rewrites it)", golden, i+1)
					}
				}
			}
		})
	}
}
