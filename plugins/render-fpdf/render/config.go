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
//	fallbackFonts: [/path/a.ttf, ...] # TrueType files for the characters DejaVu lacks; absent: the system's (SystemFallbacks) that exist; []: none
type Config struct {
	Compress bool `json:"compress"`
	MaxPages int  `json:"maxPages"`
	// FallbackFonts is nil when the key is absent, which is not the
	// same as an empty list: absent takes the system's fallbacks.
	FallbackFonts *[]string `json:"fallbackFonts,omitempty"`
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
		for _, p := range *cfg.FallbackFonts {
			if p == "" {
				return Config{}, stage.Errorf(stage.CodeInvalid, "render-fpdf config: fallbackFonts holds an empty path")
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
	switch {
	case errors.As(err, &typeErr) && typeErr.Field != "":
		return stage.Errorf(stage.CodeInvalid, "render-fpdf config: %s must be a %s", typeErr.Field, typeErr.Type)
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		return stage.Errorf(stage.CodeInvalid, "render-fpdf config: unknown key %s", strings.TrimPrefix(err.Error(), "json: unknown field "))
	}
	return stage.Wrap(stage.CodeInvalid, err, "render-fpdf config: not a JSON object")
}
