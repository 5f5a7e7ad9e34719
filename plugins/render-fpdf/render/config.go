package render

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"

	"github.com/mdpress/mdpress/plugins/render-fpdf/fonts"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Config is the plugin's config block:
//
//	compress: true     # deflate page content streams, unless under ~2 KB in all (fonts and images are always compressed)
//	maxPages: 10000    # refuse documents that need more pages (413); 0: the default
//	fallbackFonts: [/path/a.ttf, {path: /path/b.ttf, bold: /path/b-bold.ttf}, ...]
//	                   # TrueType files for the characters DejaVu lacks, each a path or a path
//	                   # and its bold face; absent: the system's (SystemFallbacks) that exist; []: none
type Config struct {
	Compress bool `json:"compress"`
	MaxPages int  `json:"maxPages"`
	// FallbackFonts is nil when the key is absent, which is not the
	// same as an empty list: absent takes the system's fallbacks.
	FallbackFonts *[]FallbackFont `json:"fallbackFonts,omitempty"`
}

// FallbackFont is a fallback font's file and, if it has one, its bold
// face's file, which draws bold text in place of the stroke that
// synthesizes it. In the config it is a path, or {path, bold}.
type FallbackFont struct {
	Path string `json:"path"`
	Bold string `json:"bold,omitempty"`
}

// fallbackError is a fallbackFonts entry of the wrong shape.
type fallbackError struct{ msg string }

func (e *fallbackError) Error() string { return e.msg }

// UnmarshalJSON reads a path or an object of path and bold, strictly.
func (f *FallbackFont) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		*f = FallbackFont{}
		return json.Unmarshal(b, &f.Path)
	}
	if len(b) == 0 || b[0] != '{' {
		return &fallbackError{"fallbackFonts entries must be a path or {path, bold}, got " + string(b)}
	}
	type plain FallbackFont // without this method
	var p plain
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return &fallbackError{"fallbackFonts: " + typeErr.Field + " must be a path"}
		}
		if key, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
			return &fallbackError{"fallbackFonts: unknown key " + key + " (an entry takes path and bold)"}
		}
		return &fallbackError{"fallbackFonts: " + err.Error()}
	}
	*f = FallbackFont(p)
	return nil
}

func defaults() Config { return Config{Compress: true, MaxPages: 10000} }

// parseConfig decodes the block strictly over the defaults.
func parseConfig(raw []byte) (Config, error) {
	cfg := defaults()
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return cfg, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return Config{}, configError(err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return Config{}, stage.Errorf(stage.CodeInvalid, "render-fpdf config: trailing data after the object")
	}
	if cfg.FallbackFonts != nil {
		if n := len(*cfg.FallbackFonts); n > fonts.MaxFallbacks {
			return Config{}, stage.Errorf(stage.CodeInvalid, "render-fpdf config: fallbackFonts lists %d fonts, at most %d", n, fonts.MaxFallbacks)
		}
		for _, f := range *cfg.FallbackFonts {
			if f.Path == "" {
				return Config{}, stage.Errorf(stage.CodeInvalid, "render-fpdf config: fallbackFonts holds an empty path")
			}
			if f.Bold == f.Path {
				return Config{}, stage.Errorf(stage.CodeInvalid, "render-fpdf config: fallbackFonts: %s is its own bold face", f.Path)
			}
		}
	}
	// 0 is the default, as in render-chrome's config and the host's: the
	// same key means the same on either backend.
	if cfg.MaxPages == 0 {
		cfg.MaxPages = defaults().MaxPages
	}
	if cfg.MaxPages < 0 {
		return Config{}, stage.Errorf(stage.CodeInvalid, "render-fpdf config: maxPages must not be negative (0 is the default, 10000), got %d", cfg.MaxPages)
	}
	return cfg, nil
}

func configError(err error) error {
	var typeErr *json.UnmarshalTypeError
	var fbErr *fallbackError
	switch {
	case errors.As(err, &fbErr):
		return stage.Errorf(stage.CodeInvalid, "render-fpdf config: %s", fbErr.msg)
	case errors.As(err, &typeErr) && strings.HasPrefix(typeErr.Field, "fallbackFonts"):
		return stage.Errorf(stage.CodeInvalid, "render-fpdf config: fallbackFonts must be a list of paths or {path, bold}")
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return stage.Errorf(stage.CodeInvalid, "render-fpdf config: %s must be a %s", typeErr.Field, typeErr.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return stage.Errorf(stage.CodeInvalid, "render-fpdf config: unknown key %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return stage.Wrap(stage.CodeInvalid, err, "render-fpdf config: not a JSON object")
}
