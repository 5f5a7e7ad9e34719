package e2e

import (
	"bytes"
	"context"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/mdpress/mdpress/core/papers"
)

// TestOpenAPIDocuments: both served descriptions are valid OpenAPI 3.1 at
// version 1.0.0, need no key, and say what the contract says: the full one
// lists every page size of core/papers and the defaults; the tool-action one
// requires output and allows only url.
func TestOpenAPIDocuments(t *testing.T) {
	h := startHost(t, withArgs("--backend", "fpdf"))
	load := func(t *testing.T, path string) *openapi3.T {
		t.Helper()
		resp, body := h.do("GET", path, "", nil, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("GET %s without a key: %d %s", path, resp.StatusCode, body)
		}
		if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
			t.Errorf("GET %s: Content-Type %q", path, ct)
		}
		doc, err := loadDoc(body)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if !strings.HasPrefix(doc.OpenAPI, "3.1.") {
			t.Errorf("%s: openapi %q, want 3.1.x", path, doc.OpenAPI)
		}
		if doc.Info == nil || doc.Info.Version != "1.0.0" {
			t.Errorf("%s: info.version is not 1.0.0", path)
		}
		return doc
	}

	t.Run("full", func(t *testing.T) {
		doc := load(t, "/v1/openapi.json")
		req := requestSchema(t, doc)
		if !reflect.DeepEqual(req.Required, []string{"markdown"}) {
			t.Errorf("required %v, want [markdown]", req.Required)
		}
		if md := req.Properties["markdown"].Value; !md.Type.Is("string") || md.MinLength != 1 {
			t.Errorf("markdown is not a string of at least 1 character")
		}
		var sizes []string
		for _, v := range req.Properties["pageSize"].Value.Enum {
			sizes = append(sizes, v.(string))
		}
		if !reflect.DeepEqual(sizes, papers.Names()) {
			t.Errorf("pageSize enum %v, want papers.Names() %v", sizes, papers.Names())
		}
		enums := []struct {
			field string
			enum  []any
			def   any
		}{
			{"output", []any{"binary", "url"}, "binary"},
			{"theme", []any{"basic", "modern"}, "modern"},
			{"pageNumeration", []any{"none", "center", "left", "right"}, "center"},
			{"pageSize", nil, "A4"},
		}
		for _, e := range enums {
			s := req.Properties[e.field].Value
			if e.enum != nil && !reflect.DeepEqual(s.Enum, e.enum) {
				t.Errorf("%s enum %v, want %v", e.field, s.Enum, e.enum)
			}
			if s.Default != e.def {
				t.Errorf("%s default %v, want %v", e.field, s.Default, e.def)
			}
		}
		ok := doc.Paths.Find("/pdf/markdown").Post.Responses.Status(200).Value
		if ok.Content.Get("application/pdf") == nil || ok.Content.Get("application/json") == nil {
			t.Error("200 of /pdf/markdown does not offer both application/pdf and application/json")
		}
		// The server sends X-Request-Id on every answer, and the document
		// says so of every answer it lists: the request id a failure is
		// reported with is also the one to quote for a download or a
		// balance that looks wrong.
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				for status, r := range op.Responses.Map() {
					h := r.Value.Headers["X-Request-Id"]
					if h == nil || !h.Value.Required {
						t.Errorf("%s %s %s declares no required X-Request-Id header", method, path, status)
					}
				}
			}
		}
	})

	t.Run("action", func(t *testing.T) {
		doc := load(t, "/v1/openapi-action.json")
		req := requestSchema(t, doc)
		if !slices.Contains(req.Required, "markdown") || !slices.Contains(req.Required, "output") {
			t.Errorf("required %v, want markdown and output", req.Required)
		}
		out := req.Properties["output"].Value
		if !reflect.DeepEqual(out.Enum, []any{"url"}) {
			t.Errorf("output enum %v, want [url] only", out.Enum)
		}
		if out.Default != "url" {
			t.Errorf("output default %v, want url", out.Default)
		}
		if doc.Paths.Find("/pdf/markdown").Post.Responses.Status(200).Value.Content.Get("application/pdf") != nil {
			t.Error("the action's 200 still offers application/pdf")
		}
		// A tool action imports the document alone and refuses a relative
		// server: it names the host's public URL.
		if len(doc.Servers) != 1 || doc.Servers[0].URL != h.URL+"/v1" {
			t.Errorf("action servers %v, want %s/v1 only", doc.Servers, h.URL)
		}
		// The description is what a tool action's validator enforces.
		router, err := gorillamux.NewRouter(doc)
		if err != nil {
			t.Fatal(err)
		}
		for body, valid := range map[string]bool{
			`{"markdown":"# Hi","output":"url"}`:                  true,
			`{"markdown":"# Hi","output":"url","theme":"basic"}`:  true,
			`{"markdown":"# Hi"}`:                                 false,
			`{"markdown":"# Hi","output":"binary"}`:               false,
			`{"markdown":"","output":"url"}`:                      false,
			`{"markdown":"# Hi","output":"url","pageSize":"A10"}`: false,
		} {
			r, _ := http.NewRequest("POST", h.URL+"/v1/pdf/markdown", bytes.NewReader([]byte(body)))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Authorization", "Bearer mdp_x")
			route, params, err := router.FindRoute(r)
			if err != nil {
				t.Fatalf("route: %v", err)
			}
			err = openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{
				Request: r, PathParams: params, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: bearerShape, SkipSettingDefaults: true},
			})
			if (err == nil) != valid {
				t.Errorf("action document on %s: valid=%v, want %v (%v)", body, err == nil, valid, err)
			}
		}
	})
}

func requestSchema(t *testing.T, doc *openapi3.T) *openapi3.Schema {
	t.Helper()
	ref := doc.Components.Schemas["MarkdownRequest"]
	if ref == nil || ref.Value == nil {
		t.Fatal("no MarkdownRequest schema")
	}
	return ref.Value
}
