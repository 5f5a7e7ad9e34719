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
// (Chinese and Japanese; it has no Hangul) and fonts-nanum (Korean), with
// NanumGothic's bold face when it is there (the package ships it), so
// that bold Korean is the family's own bold as Chromium draws it rather
// than stroked outlines; Droid has no bold face. Why
// by default: the embedded deployment renders with this plugin when no
// Chromium is found, and a Chinese document came out as a page of U+FFFD
// while the machine had a font that draws it. Both are TrueType files
// with glyf outlines, which the subsetter needs; Noto CJK is packaged as
// CFF collections (.ttc), which it cannot read.
var SystemFallbacks = []FallbackFont{
	{Path: "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf"},
	{Path: "/usr/share/fonts/truetype/nanum/NanumGothic.ttf", Bold: "/usr/share/fonts/truetype/nanum/NanumGothicBold.ttf"},
}

// WithSystemFallbacks replaces SystemFallbacks, for tests that need the
// default to be known whatever the machine has installed.
func WithSystemFallbacks(fonts ...FallbackFont) Option {
	return func(r *Renderer) { r.system = fonts }
}

// fallbackPaths returns the files cfg asks for: the configured list, or
// the system fallbacks that exist, each with its bold face if that
// exists.
func (r *Renderer) fallbackPaths(cfg Config) (fonts []FallbackFont, configured bool) {
	if cfg.FallbackFonts != nil {
		return *cfg.FallbackFonts, true
	}
	for _, f := range r.system {
		if _, err := os.Stat(f.Path); err != nil {
			continue
		}
		if f.Bold != "" {
			if _, err := os.Stat(f.Bold); err != nil {
				f.Bold = ""
			}
		}
		fonts = append(fonts, f)
	}
	return fonts, false
}

// withFallbacks reads and parses the fallback fonts once, at Configure:
// a file that cannot be read or parsed is an invalid config naming it.
func withFallbacks(base *fonts.Set, fallbacks []FallbackFont) (*fonts.Set, error) {
	if len(fallbacks) == 0 {
		return base, nil
	}
	read := func(p string) (fonts.FontFile, error) {
		data, err := os.ReadFile(p)
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return fonts.FontFile{}, stage.Errorf(stage.CodeInvalid, "render-fpdf config: fallbackFonts: %s does not exist", p)
			}
			return fonts.FontFile{}, stage.Errorf(stage.CodeInvalid, "render-fpdf config: fallbackFonts: %v", err)
		}
		return fonts.FontFile{Name: p, Data: data}, nil
	}
	files := make([]fonts.FontFile, len(fallbacks))
	for i, f := range fallbacks {
		var err error
		if files[i], err = read(f.Path); err != nil {
			return nil, err
		}
		if f.Bold != "" {
			bold, err := read(f.Bold)
			if err != nil {
				return nil, err
			}
			files[i].Bold = &bold
		}
	}
	set, err := base.WithFallbacks(files...)
	if err != nil {
		return nil, stage.Errorf(stage.CodeInvalid, "render-fpdf config: fallbackFonts: %v", err)
	}
	return set, nil
}
