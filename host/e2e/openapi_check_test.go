package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// api talks to a running host and holds every exchange to the OpenAPI
// document that host serves: a response the document does not describe,
// or a request the server and the document judge differently, fails the
// test that made it. Error bodies are also searched for internals.
type api struct {
	h      *host
	doc    *openapi3.T
	router routers.Router
	errSch *openapi3.Schema
}

var registerPDFDecoder sync.Once

// newAPI loads /v1/openapi.json from h as a client would (kin-openapi reads
// OpenAPI 3.1 natively since v0.131, so the served document is validated
// as served) and builds a router over it.
func newAPI(t testing.TB, h *host) *api {
	t.Helper()
	registerPDFDecoder.Do(func() {
		openapi3filter.RegisterBodyDecoder("application/pdf", openapi3filter.FileBodyDecoder)
	})
	resp, body := h.do("GET", "/v1/openapi.json", "", nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("GET /v1/openapi.json: %d %s", resp.StatusCode, body)
	}
	doc, err := loadDoc(body)
	if err != nil {
		t.Fatalf("served /v1/openapi.json: %v", err)
	}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("router over the served document: %v", err)
	}
	errRef := doc.Components.Schemas["Error"]
	if errRef == nil || errRef.Value == nil {
		t.Fatal("the served document has no Error schema")
	}
	return &api{h: h, doc: doc, router: router, errSch: errRef.Value}
}

// loadDoc loads and validates an OpenAPI document.
func loadDoc(data []byte) (*openapi3.T, error) {
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(data)
	if err != nil {
		return nil, err
	}
	if !doc.IsOpenAPI31OrLater() {
		return nil, errors.New("not an OpenAPI 3.1 document: openapi is " + doc.OpenAPI)
	}
	if err := doc.Validate(loader.Context); err != nil {
		return nil, err
	}
	return doc, nil
}

// call sends a request and checks the exchange against the document.
// key sets a Bearer Authorization header; hdr may override it.
func (a *api) call(t testing.TB, method, path, key string, body any, hdr map[string]string) (*http.Response, []byte) {
	t.Helper()
	var reqBody []byte
	switch b := body.(type) {
	case nil:
	case string:
		reqBody = []byte(b)
	case []byte:
		reqBody = b
	default:
		var err error
		if reqBody, err = json.Marshal(b); err != nil {
			t.Fatal(err)
		}
	}
	req := a.request(t, method, path, key, reqBody, body != nil, hdr)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	// The sent request's body is spent; validate a fresh copy.
	a.check(t, a.request(t, method, path, key, reqBody, body != nil, hdr), reqBody, resp, data)
	return resp, data
}

// get fetches an absolute URL with no Authorization, as a browser or curl
// following a hosted-file link would, and checks the exchange.
func (a *api) get(t testing.TB, url string) (*http.Response, []byte) {
	t.Helper()
	path, ok := strings.CutPrefix(url, a.h.URL)
	if !ok {
		t.Fatalf("URL %q is not on the host %s", url, a.h.URL)
	}
	return a.call(t, "GET", path, "", nil, nil)
}

func (a *api) request(t testing.TB, method, path, key string, body []byte, hasBody bool, hdr map[string]string) *http.Request {
	t.Helper()
	var rd io.Reader
	if hasBody {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(context.Background(), method, a.h.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	if hasBody {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Authorization", "Bearer "+key)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return req
}

// check holds one exchange to the document:
//   - every error body is the contract's error object and shows no internals;
//   - a route the document lacks answers 404 or 405 with an error body;
//   - a 2xx answers a request the document accepts, and a 400 one it rejects;
//   - the response (status, content type, body) is one the document lists.
func (a *api) check(t testing.TB, req *http.Request, reqBody []byte, resp *http.Response, body []byte) {
	t.Helper()
	where := req.Method + " " + req.URL.Path
	if resp.StatusCode >= 400 && req.Method != http.MethodHead { // HEAD has no body to check
		checkErrorBody(t, where, resp, body)
	}
	route, params, err := a.router.FindRoute(req)
	if err != nil {
		if resp.StatusCode != 404 && resp.StatusCode != 405 {
			t.Errorf("%s: the document has no such operation (%v), yet the server answered %d", where, err, resp.StatusCode)
			return
		}
		var v any
		if err := json.Unmarshal(body, &v); err != nil {
			t.Errorf("%s: %d body is not JSON: %q", where, resp.StatusCode, body)
			return
		}
		if err := a.errSch.VisitJSON(v, openapi3.EnableJSONSchema2020()); err != nil {
			t.Errorf("%s: %d body does not match the Error schema: %v", where, resp.StatusCode, err)
		}
		return
	}
	ctx := context.Background()
	in := &openapi3filter.RequestValidationInput{
		Request: req, PathParams: params, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: bearerShape, SkipSettingDefaults: true},
	}
	reqErr := openapi3filter.ValidateRequest(ctx, in)
	if reqErr == nil && len(reqBody) > 0 && !json.Valid(reqBody) {
		// kin-openapi decodes the first JSON value and ignores the rest.
		reqErr = errors.New("the body is not one JSON value")
	}
	if reqErr == nil && !utf8.Valid(reqBody) {
		// kin-openapi reads bytes that are not UTF-8 as U+FFFD; JSON
		// between systems is UTF-8 (RFC 8259).
		reqErr = errors.New("the body is not UTF-8")
	}
	switch {
	case resp.StatusCode >= 200 && resp.StatusCode < 300 && reqErr != nil:
		t.Errorf("%s: the server accepted (%d) a request the document rejects: %v\nrequest body: %.200s", where, resp.StatusCode, reqErr, reqBody)
	case resp.StatusCode == 400 && reqErr == nil:
		t.Errorf("%s: the server rejected (400) a request the document accepts\nrequest body: %.200s\nresponse: %s", where, reqBody, body)
	}
	out := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true},
	}
	out.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(ctx, out); err != nil {
		t.Errorf("%s: response %d does not match the document: %v\nbody: %.300s", where, resp.StatusCode, err, body)
	}
}

// bearerShape is the document's bearerAuth as a validator can judge it: a
// Bearer scheme with a token. Whether the key exists only the server knows.
func bearerShape(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	h := in.RequestValidationInput.Request.Header.Get("Authorization")
	scheme, token, _ := strings.Cut(h, " ")
	if !strings.EqualFold(scheme, "bearer") || strings.TrimSpace(token) == "" {
		return errors.New("no Bearer token")
	}
	return nil
}

// internals are fragments that betray the implementation: file paths,
// process and transport names, Go runtime traces.
var internals = []string{"/tmp", "/usr", "/root", "/home", "/proc", "/var/", "plugin", "grpc", "rpc error", "goroutine ", "panic", ".go:", "runtime.", "exit status", "sqlite", "context deadline", "chromedp", "fpdf"}

// checkErrorBody asserts the contract's error body: JSON, an object with a
// non-empty string error, only the documented fields, nothing internal.
func checkErrorBody(t testing.TB, where string, resp *http.Response, body []byte) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Errorf("%s: %d with Content-Type %q, want application/json", where, resp.StatusCode, ct)
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil {
		t.Errorf("%s: %d body is not a JSON object: %q", where, resp.StatusCode, body)
		return
	}
	var msg string
	if err := json.Unmarshal(fields["error"], &msg); err != nil || msg == "" {
		t.Errorf("%s: %d body has no error text: %s", where, resp.StatusCode, body)
	}
	for k := range fields {
		switch k {
		case "error", "details", "message", "hint", "size":
		default:
			t.Errorf("%s: %d body has an undocumented field %q", where, resp.StatusCode, k)
		}
	}
	lower := strings.ToLower(string(body))
	for _, bad := range internals {
		if strings.Contains(lower, bad) {
			t.Errorf("%s: %d body shows internals (%q): %s", where, resp.StatusCode, bad, body)
		}
	}
}
