package render

import (
	"errors"
	"io/fs"
	"os"

	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/sdk/stage"
)

// SystemFallbacks are the fallback fonts used when the config names none
// (no fallbackFonts key), each if it exists: Debian's fonts-droid-fallback
// (Chinese and Japanese; it has no Hangul) and fonts-nanum (Korean). Why
// by default: the embedded deployment renders with this plugin when no
// Chromium is found, and a Chinese document came out as a page of U+FFFD
// while the machine had a font that draws it. Both are TrueType files
// with glyf outlines, which the subsetter needs; Noto CJK is packaged as
// CFF collections (.ttc), which it cannot read.
var SystemFallbacks = []string{
	"/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
	"/usr/share/fonts/truetype/nanum/NanumGothic.ttf",
}

// WithSystemFallbacks replaces SystemFallbacks, for tests that need the
// default to be known whatever the machine has installed.
func WithSystemFallbacks(paths ...string) Option {
	return func(r *Renderer) { r.system = paths }
}

// fallbackPaths returns the files cfg asks for: the configured list, or
// the system fallbacks that exist.
func (r *Renderer) fallbackPaths(cfg Config) (paths []string, configured bool) {
	if cfg.FallbackFonts != nil {
		return *cfg.FallbackFonts, true
	}
	for _, p := range r.system {
		if _, err := os.Stat(p); err == nil {
			paths = append(paths, p)
		}
	}
	return paths, false
}

// withFallbacks reads and parses the fallback fonts once, at Configure:
// a file that cannot be read or parsed is an invalid config naming it.
func withFallbacks(base *fonts.Set, paths []string) (*fonts.Set, error) {
	if len(paths) == 0 {
		return base, nil
	}
	files := make([]fonts.FontFile, len(paths))
	for i, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil, stage.Errorf(stage.CodeInvalid, "render-fpdf config: fallbackFonts: %s does not exist", p)
			}
			return nil, stage.Errorf(stage.CodeInvalid, "render-fpdf config: fallbackFonts: %v", err)
		}
		files[i] = fonts.FontFile{Name: p, Data: data}
	}
	set, err := base.WithFallbacks(files...)
	if err != nil {
		return nil, stage.Errorf(stage.CodeInvalid, "render-fpdf config: fallbackFonts: %v", err)
	}
	return set, nil
}
