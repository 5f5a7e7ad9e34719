package api

import (
	"log/slog"
	"reflect"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/gorilla/mux"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/core/request"
	"github.com/mdpress/mdpress/host/metrics"
)

func loadServed(t *testing.T, name string, data []byte) *openapi3.T {
	t.Helper()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := doc.Validate(loader.Context); err != nil {
		t.Fatalf("%s is not a valid OpenAPI document: %v", name, err)
	}
	if !doc.IsOpenAPI31OrLater() || doc.Info.Version != "1.0.0" {
		t.Fatalf("%s: openapi %s, version %s; want 3.1 and 1.0.0", name, doc.OpenAPI, doc.Info.Version)
	}
	return doc
}

// TestOpenAPIMatchesDecoder: the document states the enums and defaults
// that core/request enforces, so the two cannot drift apart.
func TestOpenAPIMatchesDecoder(t *testing.T) {
	doc := loadServed(t, "openapi.json", openAPIFull)
	props := doc.Components.Schemas["MarkdownRequest"].Value.Properties
	tests := []struct {
		field   string
		allowed []string
		def     string
	}{
		{"output", request.Outputs, request.DefaultOutput},
		{"theme", request.Themes, request.DefaultTheme},
		{"pageNumeration", request.Numberings, request.DefaultNumbering},
		{"pageSize", papers.Names(), request.DefaultPageSize},
	}
	for _, tt := range tests {
		t.Run(tt.field, func(t *testing.T) {
			s := props[tt.field].Value
			var enum []string
			for _, v := range s.Enum {
				enum = append(enum, v.(string))
			}
			if !reflect.DeepEqual(enum, tt.allowed) {
				t.Errorf("enum %v, decoder allows %v", enum, tt.allowed)
			}
			if s.Default != tt.def {
				t.Errorf("default %v, decoder applies %v", s.Default, tt.def)
			}
		})
	}
}

// TestOpenAPILang: the lang field's examples are tags the decoder takes,
// and its pattern, which can only say a tag's shape, refuses a malformed
// one as the decoder does.
func TestOpenAPILang(t *testing.T) {
	doc := loadServed(t, "openapi.json", openAPIFull)
	s := doc.Components.Schemas["MarkdownRequest"].Value.Properties["lang"].Value
	if s == nil || len(s.Examples) == 0 {
		t.Fatal("no lang field with examples")
	}
	for _, ex := range s.Examples {
		if err := s.VisitJSON(ex); err != nil {
			t.Errorf("example %v does not fit the schema: %v", ex, err)
		}
		if _, err := request.ParseLang(ex.(string)); err != nil {
			t.Errorf("example %v: the decoder refuses it: %v", ex, err)
		}
	}
	for _, bad := range []string{"", "fr-", "not a tag", "-fr"} {
		if s.VisitJSON(bad) == nil {
			t.Errorf("the pattern takes %q, which the decoder refuses", bad)
		}
	}
}

// TestActionDocument: the tool-action variant differs from the full one
// only where a tool action needs it.
func TestActionDocument(t *testing.T) {
	full := loadServed(t, "openapi.json", openAPIFull)
	action := loadServed(t, "openapi-action.json", mustJSON(actionDoc(openAPIDoc(), "https://pdf.example.com")))
	req := action.Components.Schemas["MarkdownRequest"].Value
	if !reflect.DeepEqual(req.Required, []string{"markdown", "output"}) {
		t.Errorf("required %v", req.Required)
	}
	if out := req.Properties["output"].Value; !reflect.DeepEqual(out.Enum, []any{"url"}) || out.Default != "url" {
		t.Errorf("output enum %v default %v, want [url] and url", out.Enum, out.Default)
	}
	if action.Paths.Find("/files/{id}") != nil {
		t.Error("the action document describes the file download, which a tool never calls")
	}
	if action.Paths.Find("/pdf/markdown").Post.Responses.Status(200).Value.Content.Get("application/pdf") != nil {
		t.Error("the action's 200 still offers PDF bytes")
	}
	// Tool actions refuse a relative server: the action's names the
	// public URL.
	if len(action.Servers) != 1 || action.Servers[0].URL != "https://pdf.example.com/v1" {
		t.Errorf("action servers %v, want https://pdf.example.com/v1 only", action.Servers)
	}
	// Deriving the action must not touch the full document.
	if out := full.Components.Schemas["MarkdownRequest"].Value.Properties["output"].Value; len(out.Enum) != 2 {
		t.Errorf("full document's output enum became %v", out.Enum)
	}
}

// TestOpenAPIListsEveryRoute: each method the router serves under /v1 is
// an operation of the document (HEAD of the documents themselves aside),
// so a route cannot be added or widened without its description.
func TestOpenAPIListsEveryRoute(t *testing.T) {
	doc := loadServed(t, "openapi.json", openAPIFull)
	s := New(Options{}, slog.New(slog.DiscardHandler), noStages{}, metrics.New(prometheus.NewRegistry()))
	n := 0
	err := s.router.Walk(func(route *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		tpl, err := route.GetPathTemplate()
		if err != nil || !strings.HasPrefix(tpl, "/v1/") {
			return nil
		}
		methods, err := route.GetMethods()
		if err != nil {
			return nil
		}
		for _, m := range methods {
			if strings.HasPrefix(tpl, "/v1/openapi") {
				continue // the description does not describe itself
			}
			n++
			item := doc.Paths.Find(strings.TrimPrefix(tpl, "/v1"))
			if item == nil || item.GetOperation(m) == nil {
				t.Errorf("%s %s is served but not in openapi.yaml", m, tpl)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 4 {
		t.Fatalf("walked %d operations, want the API's", n)
	}
}
