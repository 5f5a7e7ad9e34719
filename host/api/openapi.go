package api

import (
	_ "embed"
	"encoding/json"
	"net/http"

	"gopkg.in/yaml.v3"
)

// openapi.yaml is the one source of truth; both served documents derive
// from it when the package loads, and a broken document fails the build's
// tests rather than a request.
//
//go:embed openapi.yaml
var openAPIYAML []byte

var openAPIFull = mustJSON(openAPIDoc())

func openAPIDoc() map[string]any {
	var doc map[string]any
	if err := yaml.Unmarshal(openAPIYAML, &doc); err != nil {
		panic("openapi.yaml: " + err.Error())
	}
	return doc
}

// actionDoc is the tool-action variant: output is required and only url is
// allowed, since a tool action cannot carry PDF bytes back. Its server is
// publicURL's /v1 when there is one: a tool action imports the document
// on its own, with no page of ours to resolve a relative server against,
// and refuses one.
func actionDoc(doc map[string]any, publicURL string) map[string]any {
	schemas := dig(doc, "components", "schemas")
	req := dig(schemas, "MarkdownRequest")
	req["required"] = []any{"markdown", "output"}
	out := dig(req, "properties", "output")
	out["enum"] = []any{"url"}
	out["default"] = "url"
	out["description"] = "Always url: the PDF is hosted and its URL returned (valid for at least 7 days)."
	post := dig(doc, "paths", "/pdf/markdown", "post")
	ok := dig(post, "responses", "200")
	ok["description"] = "The hosted URL of the PDF."
	content := dig(ok, "content")
	delete(content, "application/pdf")
	info := dig(doc, "info")
	info["title"] = "mdpress (tool action)"
	if publicURL != "" {
		doc["servers"] = []any{map[string]any{"url": publicURL + "/v1"}}
	}
	paths := dig(doc, "paths")
	delete(paths, "/files/{id}")
	return doc
}

func dig(m map[string]any, keys ...string) map[string]any {
	for _, k := range keys {
		m = m[k].(map[string]any)
	}
	return m
}

func mustJSON(v any) []byte {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		panic(err)
	}
	return b
}

func serveJSON(b []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b)
	}
}
