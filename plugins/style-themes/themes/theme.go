package themes

import (
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

//go:embed css/*.css
var builtinCSS embed.FS

// theme is a design plus the stylesheet that reads it.
type theme struct {
	name   string
	design design
	css    string
}

// builtins returns the themes compiled into the plugin.
func builtins() map[string]*theme {
	themes := map[string]*theme{}
	for name, d := range map[string]design{"modern": modernDesign, "basic": basicDesign} {
		css, err := builtinCSS.ReadFile("css/" + name + ".css")
		if err != nil {
			panic(err) // the embed pattern guarantees the file
		}
		themes[name] = &theme{name: name, design: d, css: string(css)}
	}
	return themes
}

// names returns the theme names in order.
func names(themes map[string]*theme) []string {
	out := make([]string, 0, len(themes))
	for name := range themes {
		out = append(out, name)
	}
	slices.Sort(out)
	return out
}

var themeName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,63}$`)

// maxCSSBytes bounds an operator stylesheet; it is copied into every
// document.
const maxCSSBytes = 1 << 20

// loadDir adds the operator themes in dir to a copy of base. Errors name
// the file.
func loadDir(dir string, base map[string]*theme) (map[string]*theme, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	themes := make(map[string]*theme, len(base))
	for name, t := range base {
		themes[name] = t
	}
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".css")
		if !ok {
			// A design alone restyles the built-in stylesheet, which
			// reads every token: an operator who only recolours the
			// alerts writes no CSS, and a JSON skipped without a word
			// left the old colours with nothing to say why.
			name, ok = strings.CutSuffix(e.Name(), ".json")
		}
		if !ok || e.IsDir() {
			continue
		}
		if !themeName.MatchString(name) {
			return nil, fmt.Errorf("%s: a theme name is lower-case letters, digits, - and _", e.Name())
		}
		builtin, ok := base[name]
		if !ok {
			// The API takes the contract's themes only: a theme of
			// another name could never be asked for.
			return nil, fmt.Errorf("%s: the API's themes are %s; name the file after the theme it replaces", e.Name(), strings.Join(slices.Sorted(maps.Keys(base)), " and "))
		}
		if _, done := themes[name]; done && themes[name] != builtin {
			continue // the .css and the .json of one theme
		}
		css := builtin.css
		if _, err := os.Stat(filepath.Join(dir, name+".css")); err == nil {
			if css, err = readCSS(filepath.Join(dir, name+".css")); err != nil {
				return nil, err
			}
		} else if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		d, err := readDesign(filepath.Join(dir, name+".json"), builtin.design)
		if err != nil {
			return nil, err
		}
		themes[name] = &theme{name: name, design: d, css: css}
	}
	return themes, nil
}

func readCSS(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxCSSBytes+1))
	if err != nil {
		return "", err
	}
	if len(b) > maxCSSBytes {
		return "", fmt.Errorf("%s: larger than %d bytes", path, maxCSSBytes)
	}
	// The stylesheet goes inside a <style> element: "</style" would end it
	// and let the rest be read as HTML.
	if bytes.Contains(bytes.ToLower(b), []byte("</style")) {
		return "", fmt.Errorf("%s: contains \"</style\"", path)
	}
	return string(b), nil
}

// readDesign decodes an operator's design file over the design of its
// base; a missing file leaves def as it is.
func readDesign(path string, def design) (design, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return def, nil
	}
	if err != nil {
		return def, err
	}
	var head struct {
		Base string `json:"base"`
	}
	if err := json.Unmarshal(raw, &head); err != nil {
		return def, fmt.Errorf("%s: %w", path, err)
	}
	switch head.Base {
	case "":
	case "modern":
		def = modernDesign
	case "basic":
		def = basicDesign
	default:
		return def, fmt.Errorf("%s: base must be \"modern\" or \"basic\", got %q", path, head.Base)
	}
	file := struct {
		Base string `json:"base"`
		design
	}{design: def}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&file); err != nil {
		return def, fmt.Errorf("%s: %w", path, err)
	}
	if err := file.design.validate(); err != nil {
		return def, fmt.Errorf("%s: %w", path, err)
	}
	return file.design, nil
}
