package e2e

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestPDFLang: the PDF's /Lang, the language a screen reader speaks the
// document in, is the request's lang on every backend, and no lang claims
// none. Chromium wrote en-US (its own locale) for every document, French
// or Japanese, and fpdf wrote nothing whatever the client knew.
func TestPDFLang(t *testing.T) {
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf not installed")
	}
	for _, backend := range backends(t) {
		t.Run(backend, func(t *testing.T) {
			h := startHost(t, withArgs("--backend", backend))
			_, key := h.account("pro", -1)
			for _, tt := range []struct{ name, markdown, lang, want string }{
				{"french", "# Bonjour\n\nUn document en français.\n", "fr", "fr"},
				{"canonical form", "# Olá\n\nUm documento.\n", "pt_br", "pt-BR"},
				{"script", "# 你好\n\n简体中文。\n", "zh-Hans", "zh-Hans"},
				{"none given", "# Hello\n\nNo language given.\n", "", ""},
			} {
				t.Run(tt.name, func(t *testing.T) {
					body := map[string]string{"markdown": tt.markdown}
					if tt.lang != "" {
						body["lang"] = tt.lang
					}
					resp, pdf := h.post(key, body)
					if resp.StatusCode != 200 {
						t.Fatalf("status %d: %.300s", resp.StatusCode, pdf)
					}
					cat := pdfCatalog(t, pdf)
					got, _ := cat["/Lang"].(string)
					got = strings.TrimPrefix(got, "u:") // qpdf's mark of a text string
					if got != tt.want {
						t.Errorf("/Lang %q, want %q", got, tt.want)
					}
				})
			}
			t.Run("malformed", func(t *testing.T) {
				for _, bad := range []any{"not a tag!!", "fr-", "", 5} {
					resp, body := h.post(key, map[string]any{"markdown": "# x", "lang": bad})
					if resp.StatusCode != 400 {
						t.Fatalf("lang %v: status %d, want 400: %.300s", bad, resp.StatusCode, body)
					}
					var e struct {
						Error   string         `json:"error"`
						Details map[string]any `json:"details"`
					}
					if err := json.Unmarshal(body, &e); err != nil || e.Details["field"] != "lang" || e.Details["allowed"] == nil {
						t.Errorf("lang %v: body %s does not name the field and what is allowed", bad, body)
					}
				}
			})
		})
	}
}

// TestRenderCLILang: `mdpress render --lang` tags the PDF as the API's
// lang does, and refuses what is not a language tag.
func TestRenderCLILang(t *testing.T) {
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf not installed")
	}
	dir := t.TempDir()
	in := filepath.Join(dir, "doc.md")
	if err := os.WriteFile(in, []byte("# Guten Tag\n\nEin Dokument.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	render := func(lang string) ([]byte, error) {
		out := filepath.Join(dir, "doc.pdf")
		cmd := exec.Command(filepath.Join(binDir, "mdpress"), "render", in, "-o", out, "--backend", "fpdf",
			"--lang", lang, "--plugin-dir", filepath.Join(binDir, "plugins"), "--data-dir", dir)
		cmd.Env = cleanEnv()
		if msg, err := cmd.CombinedOutput(); err != nil {
			return msg, err
		}
		return os.ReadFile(out)
	}
	pdf, err := render("de-CH")
	if err != nil {
		t.Fatalf("render: %v\n%s", err, pdf)
	}
	if got := pdfCatalog(t, pdf)["/Lang"]; got != "u:de-CH" {
		t.Errorf("/Lang %v, want de-CH", got)
	}
	msg, err := render("de_")
	if err == nil || !strings.Contains(string(msg), "--lang") {
		t.Errorf("a malformed tag: %v, %s; want an error naming --lang", err, msg)
	}
}

// pdfCatalog returns the document catalog of pdf as qpdf's JSON has it:
// names as keys, text strings as "u:...", references as "N 0 R". A direct
// dictionary value stays a map; an indirect one is resolved.
func pdfCatalog(t *testing.T, pdf []byte) map[string]any {
	t.Helper()
	path := filepath.Join(t.TempDir(), "doc.pdf")
	if err := os.WriteFile(path, pdf, 0o600); err != nil {
		t.Fatal(err)
	}
	raw, err := exec.Command("qpdf", "--json", "--json-key=qpdf", path).Output()
	if err != nil {
		t.Fatalf("qpdf --json: %v", err)
	}
	var doc struct {
		QPDF []json.RawMessage `json:"qpdf"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc.QPDF) != 2 {
		t.Fatalf("qpdf --json: %v", err)
	}
	var objects map[string]struct {
		Value any `json:"value"`
	}
	if err := json.Unmarshal(doc.QPDF[1], &objects); err != nil {
		t.Fatalf("qpdf --json objects: %v", err)
	}
	trailer, _ := objects["trailer"].Value.(map[string]any)
	root, _ := trailer["/Root"].(string)
	cat, ok := objects["obj:"+root].Value.(map[string]any)
	if !ok {
		t.Fatalf("no catalog at %q", root)
	}
	for k, v := range cat {
		if ref, ok := v.(string); ok && strings.HasSuffix(ref, " R") {
			if d, ok := objects["obj:"+ref].Value.(map[string]any); ok {
				cat[k] = d
			}
		}
	}
	return cat
}
