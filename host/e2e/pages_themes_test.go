package e2e

import (
	"bytes"
	"flag"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// updateDocs regenerates the README's theme pictures:
//
//	go test ./host/e2e -run TestThemeExamples -update-docs
var updateDocs = flag.Bool("update-docs", false, "rewrite docs/themes/*.png from a fresh render")

// themeDiffMin is the share of pixels two clearly different themes differ
// on at least; the same theme rendered twice differs on none.
const themeDiffMin = 0.02

// themeSample shows what a theme styles: headings, emphasis, lists, a
// quote, code and a table.
const themeSample = "# Quarterly report\n\n" +
	"A short document rendered by **mdpress** with *each theme*, to show headings, " +
	"lists, quotes, code and tables. Links look like [this one](https://example.com).\n\n" +
	"## Highlights\n\n" +
	"- Revenue grew in every region\n- Two new products shipped\n  - one of them early\n- [x] Audit closed\n\n" +
	"> Simplicity is prerequisite for reliability.\n\n" +
	"## Figures\n\n" +
	"| Region | Q1 | Q2 | Change |\n|:--|--:|--:|--:|\n| North | 120 | 138 | +15% |\n| South | 95 | 101 | +6% |\n| West | 143 | 150 | +5% |\n\n" +
	"### Reproduce\n\n" +
	"```sh\ncurl -H \"Authorization: Bearer $KEY\" \\\n  -d '{\"markdown\":\"# Hi\",\"pageSize\":\"A5\"}' \\\n  http://127.0.0.1:8080/v1/pdf/markdown -o hi.pdf\n```\n\n" +
	"1. Pick a theme\n2. Pick a page size\n3. Convert\n"

// themeBackend is the backend that shows themes best: Chromium reads the
// theme's CSS; fpdf only its tokens.
func themeBackend() string {
	if chromiumAvailable() {
		return "chrome"
	}
	return "fpdf"
}

// TestThemes: basic and modern are visibly different documents, in pixels
// and in fonts.
func TestThemes(t *testing.T) {
	pdfcheck.Require(t)
	backend := themeBackend()
	t.Logf("comparing themes on the %s backend", backend)
	h := startHost(t, withArgs("--backend", backend))
	a := newAPI(t, h)
	_, key := h.account("pro", -1)
	basic := renderTheme(t, a, key, "basic")
	modern := renderTheme(t, a, key, "modern")
	again := renderTheme(t, a, key, "modern")

	if d := pixelDiff(t, modern, again, 1); d > 0.001 {
		t.Errorf("the same theme rendered twice differs on %.2f%% of pixels: the comparison is noise", d*100)
	}
	d := pixelDiff(t, basic, modern, 1)
	t.Logf("basic and modern differ on %.1f%% of first-page pixels", d*100)
	if d < themeDiffMin {
		t.Errorf("basic and modern differ on only %.2f%% of pixels, want at least %.0f%%", d*100, themeDiffMin*100)
	}
	fb, fm := fontsOf(t, basic), fontsOf(t, modern)
	t.Logf("fonts: basic [%s], modern [%s]", fb, fm)
	if fb == fm {
		t.Errorf("basic and modern use the same fonts: %s", fb)
	}
}

// TestThemeExamples renders the first page of the sample in each theme at
// 60 dpi, as docs/themes/<theme>.png shows it. With -update-docs it
// rewrites the pictures; without, it checks they exist and match the
// render's dimensions.
func TestThemeExamples(t *testing.T) {
	pdfcheck.Require(t)
	h := startHost(t, withArgs("--backend", themeBackend()))
	a := newAPI(t, h)
	_, key := h.account("pro", -1)
	dir := filepath.Join("..", "..", "docs", "themes")
	for _, theme := range []string{"basic", "modern"} {
		t.Run(theme, func(t *testing.T) {
			fresh := firstPagePNG(t, renderTheme(t, a, key, theme), 60)
			path := filepath.Join(dir, theme+".png")
			if *updateDocs {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, fresh, 0o644); err != nil {
					t.Fatal(err)
				}
				t.Logf("wrote %s (%d bytes)", path, len(fresh))
				return
			}
			committed, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (regenerate: go test ./host/e2e -run TestThemeExamples -update-docs)", err)
			}
			want, err := png.DecodeConfig(bytes.NewReader(committed))
			if err != nil {
				t.Fatalf("%s is not a PNG: %v", path, err)
			}
			got, _ := png.DecodeConfig(bytes.NewReader(fresh))
			if got.Width != want.Width || got.Height != want.Height {
				t.Errorf("%s is %dx%d, a fresh render %dx%d: regenerate with -update-docs", path, want.Width, want.Height, got.Width, got.Height)
			}
		})
	}
}

func renderTheme(t testing.TB, a *api, key, theme string) []byte {
	t.Helper()
	resp, pdf := a.call(t, "POST", "/v1/pdf/markdown", key, map[string]string{"markdown": themeSample, "theme": theme, "pageNumeration": "center"}, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("theme %s: status %d: %s", theme, resp.StatusCode, pdf)
	}
	return pdf
}

// pixelDiff is the share of pixels of a page that differ visibly between
// two PDFs at a low resolution; pages of different sizes differ wholly.
func pixelDiff(t testing.TB, a, b []byte, page int) float64 {
	t.Helper()
	const dpi = 40
	wa, ha, pa := pdfcheck.PPM(t, a, page, dpi)
	wb, hb, pb := pdfcheck.PPM(t, b, page, dpi)
	if wa != wb || ha != hb {
		return 1
	}
	differ := 0
	for i := 0; i+2 < len(pa); i += 3 {
		if absDiff(pa[i], pb[i]) > 32 || absDiff(pa[i+1], pb[i+1]) > 32 || absDiff(pa[i+2], pb[i+2]) > 32 {
			differ++
		}
	}
	return float64(differ) / float64(wa*ha)
}

func absDiff(x, y byte) int {
	if x > y {
		return int(x - y)
	}
	return int(y - x)
}

// fontsOf lists the base fonts pdffonts reports, subset tags removed.
func fontsOf(t testing.TB, pdf []byte) string {
	t.Helper()
	if _, err := exec.LookPath("pdffonts"); err != nil {
		t.Skip("pdffonts not installed (apt-get install poppler-utils)")
	}
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("pdffonts", path).CombinedOutput()
	if err != nil {
		t.Fatalf("pdffonts: %v\n%s", err, out)
	}
	var names []string
	for i, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if i < 2 || len(f) == 0 {
			continue
		}
		name := f[0]
		if tag, rest, ok := strings.Cut(name, "+"); ok && len(tag) == 6 {
			name = rest
		}
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return strings.Join(names, ", ")
}

// firstPagePNG renders page 1 at dpi as PNG bytes.
func firstPagePNG(t testing.TB, pdf []byte, dpi int) []byte {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "doc.pdf")
	if err := os.WriteFile(in, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "page")
	if msg, err := exec.Command("pdftoppm", "-png", "-r", itoa(dpi), "-f", "1", "-l", "1", "-singlefile", in, out).CombinedOutput(); err != nil {
		t.Fatalf("pdftoppm: %v\n%s", err, msg)
	}
	b, err := os.ReadFile(out + ".png")
	if err != nil {
		t.Fatal(err)
	}
	return b
}
