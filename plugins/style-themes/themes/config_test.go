package themes

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/sdk/stage"
)

func configure(t *testing.T, s *Styler, raw string) error {
	t.Helper()
	res, err := s.Configure(t.Context(), &stage.ConfigureRequest{Config: []byte(raw)})
	if err == nil && (res.Info.Name != Name || res.Info.Version == "") {
		t.Fatalf("Info = %+v", res.Info)
	}
	return err
}

func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestConfigureErrors(t *testing.T) {
	tests := []struct {
		name  string
		raw   string
		files map[string]string // written to a temp dir that {dir} names
		want  string
	}{
		{name: "unknown key", raw: `{"themeDir": "x"}`, want: `unknown key "themeDir"`},
		{name: "wrong type", raw: `{"themesDir": 3}`, want: "key themesDir must be a string"},
		{name: "not an object", raw: `"x"`, want: "must be a JSON object"},
		{name: "trailing data", raw: `{}{}`, want: "trailing data"},
		{name: "missing dir", raw: `{"themesDir": "/nonexistent/mdpress-themes"}`, want: "themesDir"},
		{name: "bad theme name", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"My Theme.css": "p{}"}, want: "My Theme.css: a theme name"},
		{name: "theme the API cannot ask for", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"corporate.css": "p{}"}, want: "corporate.css: the API's themes are basic and modern"},
		{name: "style end tag in css", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"basic.css": "p{} </STYLE><script>"}, want: `contains "</style"`},
		{name: "unknown design key", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"basic.css": "", "basic.json": `{"fontSize": 11, "colour": "#000000"}`}, want: `unknown field "colour"`},
		{name: "bad colour", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"basic.css": "", "basic.json": `{"textColor": "red"}`}, want: "textColor must be a lower-case #rrggbb"},
		{name: "bad font", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"basic.css": "", "basic.json": `{"bodyFont": "comic"}`}, want: "bodyFont must be"},
		{name: "bad size", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"basic.css": "", "basic.json": `{"headingSizes": [20, 16, 0, 12, 11, 11]}`}, want: "headingSizes[2] must be between"},
		{name: "bad palette colour", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"basic.css": "", "basic.json": `{"codePalette": {"keyword": "red"}}`}, want: "codePalette.keyword must be empty or a lower-case #rrggbb"},
		{name: "bad alert colour", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"basic.css": "", "basic.json": `{"alertColors": {"warning": ""}}`}, want: "alertColors.warning must be a lower-case #rrggbb"},
		{name: "unknown alert kind", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"basic.css": "", "basic.json": `{"alertColors": {"danger": "#000000"}}`}, want: `unknown field "danger"`},
		{name: "unknown palette class", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"basic.css": "", "basic.json": `{"codePalette": {"operator": "#000000"}}`}, want: `unknown field "operator"`},
		{name: "design the API cannot ask for", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"corporate.json": `{}`}, want: "corporate.json: the API's themes are basic and modern"},
		{name: "bad design without its css", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"modern.json": `{"alertColor": {}}`}, want: `unknown field "alertColor"`},
		{name: "bad base", raw: `{"themesDir": "{dir}"}`, files: map[string]string{"basic.css": "", "basic.json": `{"base": "fancy"}`}, want: `base must be "modern" or "basic"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			raw := tt.raw
			if tt.files != nil {
				raw = strings.ReplaceAll(raw, "{dir}", writeFiles(t, tt.files))
			}
			s := New(nil)
			err := configure(t, s, raw)
			var se *stage.Error
			if !errors.As(err, &se) || se.Code != stage.CodeInvalid || !strings.Contains(se.Message, tt.want) {
				t.Fatalf("Configure(%s) = %v, want CodeInvalid containing %q", raw, err, tt.want)
			}
			if got := s.Themes(); len(got) != 2 {
				t.Errorf("a failed Configure left themes %v", got)
			}
			for range 2 {
				if err := s.Close(); err != nil {
					t.Fatalf("Close after a failed Configure: %v", err)
				}
			}
		})
	}
}

func TestThemesDir(t *testing.T) {
	dir := writeFiles(t, map[string]string{
		"basic.css":  "h1 { text-transform: uppercase; }",
		"basic.json": `{"headingColor": "#7b1fa2", "headingRule": true, "codePalette": {"keyword": "#ff0000", "comment": ""}, "alertColors": {"warning": "#ff6600"}}`,
		"modern.css": "body { letter-spacing: 0.01em; }",
		"notes.txt":  "ignored",
	})
	builtin := New(nil)
	if err := configure(t, builtin, `{}`); err != nil {
		t.Fatal(err)
	}
	s := New(nil)
	if err := configure(t, s, `{"themesDir": "`+dir+`"}`); err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(s.Themes(), ","); got != "basic,modern" {
		t.Fatalf("themes = %s", got)
	}
	// basic.json overlays basic's own design.
	corp, err := s.Tokens("basic", a4(t))
	if err != nil {
		t.Fatal(err)
	}
	basic, _ := builtin.Tokens("basic", a4(t))
	if corp.Theme != "basic" || corp.HeadingColor != "#7b1fa2" || !corp.HeadingRule || corp.BodyFont != basic.BodyFont || corp.FontSize != basic.FontSize {
		t.Errorf("basic.json tokens %+v do not overlay basic", corp)
	}
	// The palette overlays class by class; an empty class is codeColor.
	if p := corp.CodePalette; p.Keyword != "#ff0000" || p.Comment != "" || p.String != basic.CodePalette.String {
		t.Errorf("basic.json palette %+v does not overlay basic's %+v", p, basic.CodePalette)
	}
	// The alerts' colours overlay kind by kind, and reach the CSS as the
	// tokens carry them.
	if a := corp.AlertColors; a.Warning != "#ff6600" || a.Note != basic.AlertColors.Note || a.Note != "#0969da" {
		t.Errorf("basic.json alert colours %+v do not overlay basic's %+v", a, basic.AlertColors)
	}
	// modern.css alone keeps modern's design.
	plain, _ := s.Tokens("modern", a4(t))
	modern, _ := builtin.Tokens("modern", a4(t))
	if plain != modern {
		t.Errorf("a theme without JSON should keep its design: %+v", plain)
	}
	doc := style(t, s, &stage.StyleRequest{Document: stage.Document{HTML: body}, Theme: "basic", Page: a4(t)})
	inOrder(t, doc, "@layer mdpress-theme {", "--md-heading: #7b1fa2;", ".markdown-alert-note { --md-alert: #0969da; }",
		".markdown-alert-warning { --md-alert: #ff6600; }", "h1 { text-transform: uppercase; }", "@page", userCSS)
	doc = style(t, s, &stage.StyleRequest{Theme: "modern", Page: a4(t)})
	if !strings.Contains(doc, "letter-spacing: 0.01em") || strings.Contains(doc, "zebra") || strings.Contains(doc, "nth-child(even)") {
		t.Error("modern.css in themesDir did not replace the built-in stylesheet")
	}
	// Configuring again without the directory brings the built-ins back.
	if err := configure(t, s, `{}`); err != nil {
		t.Fatal(err)
	}
	if again, _ := s.Tokens("basic", a4(t)); again != basic {
		t.Fatalf("basic after reconfiguring = %+v", again)
	}
}

// TestThemesDirDesignAlone: a design without a stylesheet restyles the
// built-in one, which reads the tokens; it was skipped without a word.
func TestThemesDirDesignAlone(t *testing.T) {
	dir := writeFiles(t, map[string]string{"modern.json": `{"alertColors": {"warning": "#b35900"}}`})
	builtin := New(nil)
	if err := configure(t, builtin, `{}`); err != nil {
		t.Fatal(err)
	}
	s := New(nil)
	if err := configure(t, s, `{"themesDir": "`+dir+`"}`); err != nil {
		t.Fatal(err)
	}
	got, _ := s.Tokens("modern", a4(t))
	want, _ := builtin.Tokens("modern", a4(t))
	want.AlertColors.Warning = "#b35900"
	if got != want {
		t.Errorf("modern.json alone: tokens %+v, want modern's with the warning recoloured", got)
	}
	doc := style(t, s, &stage.StyleRequest{Theme: "modern", Page: a4(t)})
	plain := style(t, builtin, &stage.StyleRequest{Theme: "modern", Page: a4(t)})
	if !strings.Contains(doc, ".markdown-alert-warning { --md-alert: #b35900; }") {
		t.Error("modern.json's alert colour is not in the CSS")
	}
	if strings.Replace(doc, "#b35900", "#9a6700", 1) != plain {
		t.Error("modern.json alone changed more than its colour: the built-in stylesheet should stay")
	}
}

func TestHealth(t *testing.T) {
	if err := New(nil).Health(t.Context()); err != nil {
		t.Fatal(err)
	}
}
