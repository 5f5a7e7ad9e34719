package render

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

// TestFallbackBoldFace: bold text drawn from a fallback font whose bold
// face is known (NanumGothicBold beside NanumGothic, by default or named
// in the config) is drawn in that face, embedded as a subset of its own,
// as Chromium draws bold Korean, not stroked (1.60x the regular run's
// ink here, 1.67x stroked; Chromium's bold Korean has 1.54x its regular
// one's). A fallback named without its bold face keeps synthetic bold.
// Bold italic takes the bold face, slanted. It drew every bold Korean run
// by stroking the regular outlines.
func TestFallbackBoldFace(t *testing.T) {
	needFallbacks(t)
	needTool(t, "pdftotext")
	needTool(t, "pdftoppm")
	needTool(t, "pdffonts")
	const run = "한국어굵은글씨"
	for _, tc := range []struct {
		name, config string
		face         bool
	}{
		{"default", `{"compress": false}`, true},
		{"configured", `{"compress": false, "fallbackFonts": ["` + droidFont + `", {"path": "` + nanumFont + `", "bold": "` + nanumBold + `"}]}`, true},
		{"no bold face", `{"compress": false, "fallbackFonts": ["` + droidFont + `", {"path": "` + nanumFont + `"}]}`, false},
		{"paths alone", `{"compress": false, "fallbackFonts": ["` + droidFont + `", "` + nanumFont + `"]}`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := fallbackRenderer(t, tc.config, nil)
			draw := func(src string) (ink, []byte) {
				t.Helper()
				resp := renderPDF(t, r, req{doc: markdownDoc(t, src), tokens: basicTokens, page: "A6", numbering: stage.NumberingNone})
				if got := strings.TrimSpace(bodyText(t, resp.PDF)); got != run {
					t.Errorf("%s: text %q", src, got)
				}
				w, h, px := rasterGray(t, resp.PDF, 300)
				return measureInk(w, h, px, 0, w), resp.PDF
			}
			regular, _ := draw(run)
			bold, pdf := draw("**" + run + "**")
			ratio := float64(bold.dark) / float64(regular.dark)
			t.Logf("bold %d dark pixels, regular %d: %.2fx", bold.dark, regular.dark, ratio)
			if ratio < 1.3 {
				t.Errorf("bold has %.2fx the regular run's ink: not bold", ratio)
			}
			var names []string
			for _, f := range pdfFonts(t, pdf) {
				names = append(names, f[0])
			}
			embedded := strings.Contains(strings.Join(names, " "), "+NanumGothicBold")
			stroked := bytes.Contains(pdf, []byte("2 Tr"))
			if embedded != tc.face || stroked == tc.face {
				t.Errorf("fonts %v, stroked %v: want the bold face %v, stroked %v", names, stroked, tc.face, !tc.face)
			}
			both, _ := draw("***" + run + "***")
			// Against the bold run's slant: the stroke shifts it.
			if both.slant-bold.slant < 3 || float64(both.dark) < 1.3*float64(regular.dark) {
				t.Errorf("bold italic: slant %.1f px (bold %.1f), %d dark pixels (regular %d)", both.slant, bold.slant, both.dark, regular.dark)
			}
		})
	}
}

// TestFallbackBoldConfigErrors: a bold face that cannot be used is an
// invalid config naming it, at Configure, as a fallback font is.
func TestFallbackBoldConfigErrors(t *testing.T) {
	needFallbacks(t)
	for _, tc := range []struct{ config, want string }{
		{`{"fallbackFonts": [{"path": "` + nanumFont + `", "bold": "/nonexistent/bold.ttf"}]}`, "/nonexistent/bold.ttf does not exist"},
		{`{"fallbackFonts": [{"path": "` + nanumFont + `", "bold": "` + nanumFont + `"}]}`, "is its own bold face"},
		{`{"fallbackFonts": [{"bold": "` + nanumBold + `"}]}`, "empty path"},
		{`{"fallbackFonts": [{"path": "` + nanumFont + `", "weight": 700}]}`, `unknown key "weight" (an entry takes path and bold)`},
		{`{"fallbackFonts": [{"path": "` + nanumFont + `", "bold": 1}]}`, "fallbackFonts: bold must be a path"},
		{`{"fallbackFonts": [7]}`, "entries must be a path or {path, bold}, got 7"},
		{`{"fallbackFonts": [{"path": "` + nanumFont + `", "bold": "/etc/hostname"}]}`, "/etc/hostname: "},
	} {
		r := New(nil, WithFonts(mustFonts(t)))
		_, err := r.Configure(context.Background(), &stage.ConfigureRequest{Config: []byte(tc.config)})
		if err == nil || stage.CodeOf(err) != stage.CodeInvalid || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err %v, want invalid config with %q", tc.config, err, tc.want)
		}
	}
}
