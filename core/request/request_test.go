package request

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mdpress/mdpress/core/apierr"
)

func TestDecode(t *testing.T) {
	tests := []struct {
		name      string
		body      string
		wantErr   string // substring of the error text; "" means success
		wantField string
	}{
		{"only markdown", `{"markdown":"# Hi"}`, "", ""},
		{"all fields", `{"markdown":"x","output":"url","theme":"basic","pageNumeration":"left","pageSize":"Folio"}`, "", ""},
		{"nulls take defaults", `{"markdown":"x","output":null,"theme":null}`, "", ""},
		{"unknown fields ignored", `{"markdown":"x","extra":1}`, "", ""},
		{"empty body", ``, "empty", ""},
		{"byte order mark", "\ufeff{\"markdown\":\"# Hi\"}", "", ""},
		{"byte order mark alone", "\ufeff", "empty", ""},
		{"byte order mark, then invalid json", "\ufeff{\"markdown\":", "not valid JSON", ""},
		{"invalid json", `{"markdown":`, "not valid JSON", ""},
		{"second value", `{"markdown":"x"} {}`, "not valid JSON", ""},
		{"valid but too deep", `{"markdown":"x","y":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`, "nests deeper than 10000 levels", ""},
		{"null body", `null`, "JSON object", ""},
		// Latin-1 is refused rather than decoded into U+FFFD; the
		// character itself, or its escape, is kept.
		{"latin-1 markdown", "{\"markdown\":\"caf\xe9\"}", "not UTF-8", ""},
		{"utf-16 with a byte order mark", "\xff\xfe{\x00\"\x00m\x00\"\x00:\x00\"\x00x\x00\"\x00}\x00", "UTF-16", ""},
		{"utf-16 big-endian without one", "\x00{\x00\"\x00m\x00\"\x00:\x00\"\x00x\x00\"\x00}", "UTF-16", ""},
		{"replacement character", `{"markdown":"caf\ufffd ` + "\ufffd" + `"}`, "", ""},
		{"unknown field with a huge number", `{"markdown":"x","n":{"m":[1e400]}}`, "", ""},
		{"page size huge number", `{"markdown":"x","pageSize":1e400}`, "must be a string", "pageSize"},
		{"array", `["x"]`, "JSON object", ""},
		{"string", `"x"`, "JSON object", ""},
		{"missing markdown", `{"theme":"basic"}`, "required", "markdown"},
		{"null markdown", `{"markdown":null}`, "required", "markdown"},
		{"empty markdown", `{"markdown":""}`, "must not be empty", "markdown"},
		{"markdown number", `{"markdown":5}`, "must be a string", "markdown"},
		{"output bad", `{"markdown":"x","output":"pdf"}`, "unsupported value", "output"},
		{"output number", `{"markdown":"x","output":1}`, "must be a string", "output"},
		{"theme bad", `{"markdown":"x","theme":"dark"}`, "unsupported value", "theme"},
		{"numbering bad", `{"markdown":"x","pageNumeration":"top"}`, "unsupported value", "pageNumeration"},
		{"page size case", `{"markdown":"x","pageSize":"a4"}`, "unsupported value", "pageSize"},
		{"page size bad", `{"markdown":"x","pageSize":"A10"}`, "unsupported value", "pageSize"},
		{"page size bool", `{"markdown":"x","pageSize":true}`, "must be a string", "pageSize"},
		{"lang", `{"markdown":"x","lang":"pt-BR"}`, "", ""},
		{"lang null", `{"markdown":"x","lang":null}`, "", ""},
		{"lang malformed", `{"markdown":"x","lang":"not a tag!!"}`, "not a language tag", "lang"},
		{"lang trailing hyphen", `{"markdown":"x","lang":"fr-"}`, "not a language tag", "lang"},
		{"lang unregistered", `{"markdown":"x","lang":"xx"}`, "not a language tag", "lang"},
		{"lang empty", `{"markdown":"x","lang":""}`, "not a language tag", "lang"},
		{"lang number", `{"markdown":"x","lang":7}`, "must be a string", "lang"},
		// A known field misspelt is refused, not ignored into a charged
		// PDF without the option; fields far from every name still pass.
		{"field name case", `{"markdown":"x","pagesize":"Letter"}`, `unknown field "pagesize"; did you mean "pageSize"?`, "pageSize"},
		{"field name snake case", `{"markdown":"x","page_numeration":"none"}`, `did you mean "pageNumeration"?`, "pageNumeration"},
		{"field name typo", `{"markdown":"x","pageSzie":"A5"}`, `did you mean "pageSize"?`, "pageSize"},
		{"field name synonym", `{"markdown":"x","numbering":"none"}`, `did you mean "pageNumeration"?`, "pageNumeration"},
		{"field name one edit", `{"markdown":"x","Theme":"basic"}`, `did you mean "theme"?`, "theme"},
		{"markdown misnamed", `{"Markdown":"x"}`, `did you mean "markdown"?`, "markdown"},
		{"far names ignored", `{"markdown":"x","input":"y","title":"t","language_model":1,"type":"x"}`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Decode([]byte(tt.body))
			if tt.wantErr == "" {
				if err != nil {
					t.Fatalf("unexpected error: %v", err)
				}
				if c.Markdown == "" || c.Page.Name == "" {
					t.Fatalf("incomplete: %+v", c)
				}
				return
			}
			var ae *apierr.Error
			if !errors.As(err, &ae) || ae.Status != 400 {
				t.Fatalf("want a 400 apierr, got %v", err)
			}
			if !contains(ae.Body.Error, tt.wantErr) {
				t.Fatalf("error %q does not say %q", ae.Body.Error, tt.wantErr)
			}
			if tt.wantField != "" && ae.Body.Details["field"] != tt.wantField {
				t.Fatalf("details %v do not name %s", ae.Body.Details, tt.wantField)
			}
			if tt.wantField != "" && (ae.Body.Details["received"] == nil || ae.Body.Details["allowed"] == nil) {
				t.Fatalf("details %v do not say what was received and what is allowed", ae.Body.Details)
			}
			if ae.Body.Hint == "" {
				t.Fatal("no hint")
			}
		})
	}
}

// A tag arrives in its canonical form, which alone goes into the HTML and
// the PDF; no tag is no language, not English.
func TestDecodeLang(t *testing.T) {
	for sent, want := range map[string]string{
		"":                     "",
		`,"lang":"fr"`:         "fr",
		`,"lang":"EN_us"`:      "en-US",
		`,"lang":"zh-Hans"`:    "zh-Hans",
		`,"lang":"iw"`:         "he",
		`,"lang":"sr-Latn-RS"`: "sr-Latn-RS",
	} {
		c, err := Decode([]byte(`{"markdown":"x"` + sent + `}`))
		if err != nil {
			t.Fatalf("%s: %v", sent, err)
		}
		if c.Lang != want {
			t.Errorf("%s: lang %q, want %q", sent, c.Lang, want)
		}
	}
}

// The markdown arrives as sent, escapes decoded; a body that is not JSON
// says where it stops being JSON.
func TestDecodeValues(t *testing.T) {
	c, err := Decode([]byte(`  {"theme":"basic","markdown":"# T\u00e9\n\n\"q\" \ud83d\ude00 \\"}` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if want := "# T\u00e9\n\n\"q\" \U0001F600 \\"; c.Markdown != want || c.Theme != "basic" {
		t.Fatalf("markdown %q theme %q, want %q basic", c.Markdown, c.Theme, want)
	}
	for body, pos := range map[string]int64{`{"markdown":"x",}`: 17, `{"markdown":"x"} {}`: 18, `{"markdown":"x"`: 15} {
		_, err := Decode([]byte(body))
		var ae *apierr.Error
		if !errors.As(err, &ae) || ae.Body.Details["position"] != pos {
			t.Errorf("%s: %v %v, want the position %d", body, err, ae.Body.Details, pos)
		}
	}
	_, err = Decode([]byte(`{"theme":"basic"}`))
	var ae *apierr.Error
	if !errors.As(err, &ae) || ae.Body.Details["received"] != "nothing" {
		t.Errorf("missing markdown: %v, want received: nothing", err)
	}
}

func TestDefaults(t *testing.T) {
	c, err := Decode([]byte(`{"markdown":"x"}`))
	if err != nil {
		t.Fatal(err)
	}
	if c.Output != "binary" || c.Theme != "modern" || c.Numbering != "center" || c.Page.Name != "A4" {
		t.Fatalf("defaults: %+v", c)
	}
	c, _ = Decode([]byte(`{"markdown":"x","pageSize":"Ledger"}`))
	if c.Page.WidthPt != 1224 || c.Page.HeightPt != 792 {
		t.Fatalf("Ledger: %+v", c.Page)
	}
}

func contains(s, sub string) bool { return strings.Contains(s, sub) }

// TestRejectedValueClipped: an error repeats at most a short prefix of a
// rejected value, cut on a character boundary, however large the value.
func TestRejectedValueClipped(t *testing.T) {
	for _, value := range []string{strings.Repeat("A", 5<<20), strings.Repeat("é", 1000)} {
		_, err := Decode([]byte(`{"markdown":"x","pageSize":"` + value + `"}`))
		var ae *apierr.Error
		if !errors.As(err, &ae) {
			t.Fatalf("want an apierr, got %v", err)
		}
		received, _ := ae.Body.Details["received"].(string)
		if len(ae.Body.Error) > 200 || len(received) > maxShown+len("…") {
			t.Fatalf("error of %d bytes repeats %d bytes of the value", len(ae.Body.Error), len(received))
		}
		if !strings.HasSuffix(received, "…") || !utf8.ValidString(received) || !strings.HasPrefix(value, strings.TrimSuffix(received, "…")) {
			t.Fatalf("received %q is not a marked prefix of the value", received)
		}
	}
}

// BenchmarkDecode decodes the body of a ten-page report (the document of
// plugins/bench) and of one about a megabyte long.
func BenchmarkDecode(b *testing.B) {
	var doc strings.Builder
	for i := range 28 {
		fmt.Fprintf(&doc, "## Section %d\n\nThis paragraph describes the results of section %d in some detail, with **bold** and _italic_ words and a [link](https://example.com).\n\n- first point\n- second point\n\n| metric | value |\n|---|---:|\n| revenue | %d |\n\n", i+1, i+1, 1000+i)
	}
	for _, size := range []struct {
		name   string
		copies int
	}{{"10pages", 1}, {"1MB", 1 << 20 / doc.Len()}} {
		body, err := json.Marshal(map[string]string{"markdown": strings.Repeat(doc.String(), size.copies), "theme": "basic"})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(size.name, func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := Decode(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkDecodeUnknownNames: a megabyte body of field names the
// contract does not know, short and long, against the 1MB document: the
// near-miss check must stay small next to decoding the JSON itself.
func BenchmarkDecodeUnknownNames(b *testing.B) {
	for _, n := range []int{6, 64} {
		fields := map[string]any{"markdown": "x"}
		for i := 0; len(fields)*(n+8) < 1<<20; i++ {
			name := fmt.Sprintf("%0*d", n, i)
			fields[name] = 1
		}
		body, err := json.Marshal(fields)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("name=%dB", n), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if _, err := Decode(body); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
