package e2e

import (
	"encoding/json"
	"fmt"
	"math"
	"mime"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestContract holds one fpdf host to the public contract rule by rule:
// every 4xx the contract names, the defaults, the account document and
// hosted files. Every exchange also goes through the OpenAPI document the
// host serves (api.check).
func TestContract(t *testing.T) {
	pdfcheck.Require(t)
	h := startHost(t, withArgs("--backend", "fpdf"))
	a := newAPI(t, h)
	t.Run("BadRequest", func(t *testing.T) { contractBadRequests(t, a) })
	t.Run("Unauthorized", func(t *testing.T) { contractUnauthorized(t, a) })
	t.Run("NoCredits", func(t *testing.T) { contractNoCredits(t, a) })
	t.Run("Routes", func(t *testing.T) { contractRoutes(t, a) })
	t.Run("Defaults", func(t *testing.T) { contractDefaults(t, a) })
	t.Run("UserInfo", func(t *testing.T) { contractUserInfo(t, a) })
	t.Run("HostedURL", func(t *testing.T) { contractHostedURL(t, a) })
	t.Run("BinaryName", func(t *testing.T) { contractBinaryName(t, a) })
}

// contractBadRequests: each malformed body is a 400 whose details name the
// field, what was received and what is allowed, with a hint, and costs
// nothing.
func contractBadRequests(t *testing.T, a *api) {
	_, key := a.h.account("pro", 20)
	outputs := []any{"binary", "url"}
	themes := []any{"basic", "modern"}
	numberings := []any{"none", "center", "left", "right"}
	var sizes []any
	for _, n := range papers.Names() {
		sizes = append(sizes, n)
	}
	tests := []struct {
		name     string
		body     string
		hdr      map[string]string
		field    string // details.field; "" when the body has no field to blame
		received any    // details.received; nil when not checked
		allowed  any    // details.allowed: the exact list, or "" for any non-empty text
		says     string // fragment of the error text
	}{
		{name: "invalid JSON", body: `{"markdown": "# Hi"`, says: "not valid JSON"},
		{name: "trailing garbage", body: `{"markdown": "# Hi"} x`, says: "not valid JSON"},
		{name: "empty body", body: ``, says: "empty"},
		{name: "array body", body: `["# Hi"]`, received: "an array", says: "JSON object"},
		{name: "string body", body: `"# Hi"`, received: "a string", says: "JSON object"},
		{name: "number body", body: `42`, received: "a number", says: "JSON object"},
		{name: "missing markdown", body: `{"theme":"basic"}`, field: "markdown", received: "nothing", allowed: "", says: "required"},
		{name: "null markdown", body: `{"markdown":null}`, field: "markdown", received: "null", allowed: "", says: "required"},
		{name: "empty markdown", body: `{"markdown":""}`, field: "markdown", received: "", allowed: "", says: "empty"},
		{name: "markdown number", body: `{"markdown":5}`, field: "markdown", received: "a number", allowed: "", says: "string"},
		{name: "markdown array", body: `{"markdown":["# Hi"]}`, field: "markdown", received: "an array", allowed: "", says: "string"},
		{name: "output number", body: `{"markdown":"x","output":1}`, field: "output", received: "a number", allowed: outputs, says: "string"},
		{name: "output unknown", body: `{"markdown":"x","output":"pdf"}`, field: "output", received: "pdf", allowed: outputs, says: "output"},
		{name: "theme boolean", body: `{"markdown":"x","theme":true}`, field: "theme", received: "a boolean", allowed: themes, says: "string"},
		{name: "theme unknown", body: `{"markdown":"x","theme":"dark"}`, field: "theme", received: "dark", allowed: themes, says: "theme"},
		{name: "numbering array", body: `{"markdown":"x","pageNumeration":["left"]}`, field: "pageNumeration", received: "an array", allowed: numberings, says: "string"},
		{name: "numbering unknown", body: `{"markdown":"x","pageNumeration":"top"}`, field: "pageNumeration", received: "top", allowed: numberings, says: "pageNumeration"},
		{name: "page size object", body: `{"markdown":"x","pageSize":{"w":1}}`, field: "pageSize", received: "an object", allowed: sizes, says: "string"},
		{name: "page size unknown", body: `{"markdown":"x","pageSize":"A10"}`, field: "pageSize", received: "A10", allowed: sizes, says: "pageSize"},
		{name: "page size wrong case", body: `{"markdown":"x","pageSize":"a4"}`, field: "pageSize", received: "a4", allowed: sizes, says: "pageSize"},
		{name: "form upload", body: "--b\r\nContent-Disposition: form-data; name=\"markdown\"\r\n\r\n# Hi\r\n--b--\r\n",
			hdr: map[string]string{"Content-Type": "multipart/form-data; boundary=b"}, field: "Content-Type", received: "multipart/form-data", allowed: "", says: "multipart/form-data, not JSON"},
		{name: "urlencoded form", body: `markdown=%23+Hi`, hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"},
			field: "Content-Type", received: "application/x-www-form-urlencoded", allowed: "", says: "application/x-www-form-urlencoded, not JSON"},
		{name: "raw Markdown", body: "# Hi\n", hdr: map[string]string{"Content-Type": "text/markdown; charset=utf-8"},
			field: "Content-Type", received: "text/markdown", allowed: "", says: "text/markdown, not JSON"},
		// JSON with a mistake, under the form type curl -d sends or a label
		// naming JSON that does not parse, is told its mistake.
		{name: "invalid JSON sent as a form", body: `{"markdown": "# Hi",}`, hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, says: "not valid JSON"},
		{name: "trailing garbage sent as a form", body: `{"markdown": "# Hi"} x`, hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, says: "not valid JSON"},
		{name: "invalid JSON with a byte order mark sent as a form", body: "\ufeff{\"markdown\": \"# Hi\",}", hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, says: "not valid JSON"},
		{name: "too deep sent as a form", body: `{"markdown":"x","y":` + strings.Repeat("[", 10001) + strings.Repeat("]", 10001) + `}`,
			hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, says: "nests deeper than 10000 levels"},
		{name: "invalid JSON under a malformed JSON type", body: `{"markdown": "# Hi",}`, hdr: map[string]string{"Content-Type": "application/json; charset"}, says: "not valid JSON"},
		{name: "blank form", body: " \n", hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, says: "empty"},
		// Whatever charset the label declares: encoding/json read each
		// Latin-1 byte as U+FFFD into a charged PDF.
		{name: "latin-1 body", body: "{\"markdown\": \"# Caf\xe9 cr\xe8me\"}", hdr: map[string]string{"Content-Type": "application/json; charset=iso-8859-1"},
			received: "bytes that are not UTF-8", allowed: "", says: "not UTF-8"},
		// As Windows PowerShell 5 writes a file, sent by curl -d.
		{name: "UTF-16 body sent as a form", body: "\xff\xfe{\x00\"\x00m\x00a\x00r\x00k\x00d\x00o\x00w\x00n\x00\"\x00:\x00\"\x00#\x00\"\x00}\x00",
			hdr: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, received: "UTF-16", allowed: "", says: "UTF-16, not UTF-8"},
		{name: "gzip body", body: "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03\xab\x56\xca", hdr: map[string]string{"Content-Encoding": "gzip"},
			field: "Content-Encoding", received: "gzip", allowed: "", says: "uncompressed"},
		{name: "idempotency key too long", body: `{"markdown":"x"}`, hdr: map[string]string{"Idempotency-Key": strings.Repeat("k", 256)}, field: "Idempotency-Key", received: "256 characters", allowed: "", says: "Idempotency-Key"},
	}
	before := a.credits(t, key)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := a.call(t, "POST", "/v1/pdf/markdown", key, tt.body, tt.hdr)
			if resp.StatusCode != 400 {
				t.Fatalf("status %d, want 400: %s", resp.StatusCode, body)
			}
			e := readError(t, body)
			if !strings.Contains(e.Error, tt.says) {
				t.Errorf("error %q does not say %q", e.Error, tt.says)
			}
			if e.Hint == "" {
				t.Errorf("no hint: %s", body)
			}
			if tt.field != "" && e.Details["field"] != tt.field {
				t.Errorf("details.field = %v, want %s: %s", e.Details["field"], tt.field, body)
			}
			if tt.received != nil {
				got, ok := e.Details["received"]
				if !ok || got != tt.received {
					t.Errorf("details.received = %#v, want %#v: %s", got, tt.received, body)
				}
			}
			switch want := tt.allowed.(type) {
			case nil:
			case string:
				if s, _ := e.Details["allowed"].(string); s == "" {
					t.Errorf("details.allowed missing: %s", body)
				}
			default:
				if !reflect.DeepEqual(e.Details["allowed"], want) {
					t.Errorf("details.allowed = %v, want %v", e.Details["allowed"], want)
				}
			}
			if got := a.credits(t, key); got != before {
				t.Errorf("a rejected request changed the balance from %d to %d", before, got)
			}
		})
	}
}

// contractUnauthorized: every way of not presenting a live key is a 401 on
// both API endpoints, saying the Authorization header is missing or
// invalid, and costs nothing.
func contractUnauthorized(t *testing.T, a *api) {
	user, _ := a.h.account("pro", 5)
	revoked := a.newKey(t, user)
	live := a.newKey(t, user)
	a.h.mdpress("accounts", "keys", "revoke", revoked.KeyID)
	before := a.credits(t, live.APIKey)

	auths := []struct {
		name   string
		header string // "" sends no Authorization header
	}{
		{"missing header", ""},
		{"basic scheme", "Basic " + live.APIKey},
		{"token without scheme", live.APIKey},
		{"scheme without token", "Bearer"},
		{"empty token", "Bearer    "},
		{"unknown key", "Bearer mdp_" + strings.Repeat("0", 40)},
		{"key with junk", "Bearer " + live.APIKey + "x"},
		{"revoked key", "Bearer " + revoked.APIKey},
	}
	endpoints := []struct {
		method, path string
		body         any
	}{
		{"POST", "/v1/pdf/markdown", map[string]string{"markdown": "# Hi"}},
		{"GET", "/v1/user/info", nil},
	}
	for _, ep := range endpoints {
		for _, au := range auths {
			t.Run(ep.method+" "+ep.path+"/"+au.name, func(t *testing.T) {
				hdr := map[string]string{}
				if au.header != "" {
					hdr["Authorization"] = au.header
				}
				resp, body := a.call(t, ep.method, ep.path, "", ep.body, hdr)
				if resp.StatusCode != 401 {
					t.Fatalf("status %d, want 401: %s", resp.StatusCode, body)
				}
				e := readError(t, body)
				if !strings.Contains(e.Error, "Authorization header") || !strings.Contains(e.Error, "missing or invalid") {
					t.Errorf("error %q does not say the Authorization header is missing or invalid", e.Error)
				}
				if !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
					t.Errorf("WWW-Authenticate %q, want a Bearer challenge", resp.Header.Get("WWW-Authenticate"))
				}
			})
		}
	}
	if got := a.credits(t, live.APIKey); got != before {
		t.Errorf("refused requests changed the balance from %d to %d", before, got)
	}
	// The live key of the same account still works: revocation is per key.
	if resp, body := a.call(t, "POST", "/v1/pdf/markdown", live.APIKey, map[string]string{"markdown": "# Live"}, nil); resp.StatusCode != 200 {
		t.Fatalf("live key after revoking its sibling: %d %s", resp.StatusCode, body)
	}
}

// contractNoCredits: an account with no credits is refused with 403, and
// the refusal costs nothing; the account can still read its info.
func contractNoCredits(t *testing.T, a *api) {
	_, key := a.h.account("pro", 0)
	for _, output := range []string{"binary", "url"} {
		t.Run(output, func(t *testing.T) {
			resp, body := a.call(t, "POST", "/v1/pdf/markdown", key, map[string]string{"markdown": "# Broke", "output": output}, nil)
			if resp.StatusCode != 403 {
				t.Fatalf("status %d, want 403: %s", resp.StatusCode, body)
			}
			e := readError(t, body)
			if !strings.Contains(strings.ToLower(e.Error), "credit") {
				t.Errorf("error %q does not mention credits", e.Error)
			}
			// What the meter knows, for a client to act on: the balance,
			// what the conversion needs and when the balance resets.
			sameKeys(t, "403 details", e.Details, "credits", "needed", "nextReset")
			if e.Details["credits"] != 0.0 || e.Details["needed"] != 1.0 {
				t.Errorf("403 details %v, want credits 0 and needed 1", e.Details)
			}
			if _, err := time.Parse(time.RFC3339, fmt.Sprint(e.Details["nextReset"])); err != nil {
				t.Errorf("403 nextReset: %v", err)
			}
			if got := a.credits(t, key); got != 0 {
				t.Errorf("balance %d after a refusal, want 0", got)
			}
		})
	}
}

// contractRoutes: unknown routes are a JSON 404, known routes with the
// wrong method a JSON 405 whose Allow header names the right ones, unknown
// hosted files a JSON 404.
func contractRoutes(t *testing.T, a *api) {
	_, key := a.h.account("pro", 5)
	tests := []struct {
		method, path string
		status       int
		allow        string
	}{
		{"GET", "/v1/nope", 404, ""},
		{"POST", "/v1/nope", 404, ""},
		{"GET", "/v1/pdf/html", 404, ""},
		{"POST", "/v2/pdf/markdown", 404, ""},
		{"GET", "/v2/pdf/markdown", 404, ""},
		{"GET", "/nope.html", 404, ""},
		{"GET", "/v1/pdf/markdown", 405, "POST"},
		{"PUT", "/v1/pdf/markdown", 405, "POST"},
		{"DELETE", "/v1/pdf/markdown", 405, "POST"},
		{"DELETE", "/v1/files/0123456789abcdef0123456789abcdef", 405, "GET, HEAD"},
		{"POST", "/v1/user/info", 405, "GET, HEAD"},
		{"GET", "/v1/files/abcdefghijklmnopqrstuvwxyz012345", 404, ""},
		{"GET", "/v1/files/..%2f..%2fetc%2fpasswd", 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.method+" "+tt.path, func(t *testing.T) {
			var body any
			if tt.method != "GET" && tt.method != "DELETE" {
				body = map[string]string{"markdown": "# Hi"}
			}
			resp, data := a.call(t, tt.method, tt.path, key, body, nil)
			if resp.StatusCode != tt.status {
				t.Fatalf("status %d, want %d: %.200s", resp.StatusCode, tt.status, data)
			}
			if got := resp.Header.Get("Allow"); got != tt.allow {
				t.Errorf("Allow %q, want %q", got, tt.allow)
			}
		})
	}
}

// contractDefaults: a body with only markdown gives binary A4 with centered
// page numbers in the modern theme, exactly as if those were sent.
func contractDefaults(t *testing.T, a *api) {
	_, key := a.h.account("pro", 10)
	md := threePages()
	render := func(body map[string]string) []byte {
		t.Helper()
		resp, pdf := a.call(t, "POST", "/v1/pdf/markdown", key, body, nil)
		if resp.StatusCode != 200 {
			t.Fatalf("%v: status %d: %s", body, resp.StatusCode, pdf)
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/pdf" {
			t.Fatalf("Content-Type %q, want application/pdf", ct)
		}
		return pdf
	}
	implicit := render(map[string]string{"markdown": md})
	explicit := render(map[string]string{"markdown": md, "output": "binary", "theme": "modern", "pageNumeration": "center", "pageSize": "A4"})
	basic := render(map[string]string{"markdown": md, "theme": "basic"})

	info := pdfcheck.Read(t, implicit)
	if math.Abs(info.WidthPt-595.28) > 1 || math.Abs(info.HeightPt-841.89) > 1 {
		t.Errorf("default page %.2fx%.2f, want A4 595.28x841.89", info.WidthPt, info.HeightPt)
	}
	if info.Pages < 3 {
		t.Fatalf("%d pages, want at least 3", info.Pages)
	}
	checkNumbering(t, implicit, "center")
	if d := pixelDiff(t, implicit, explicit, 1); d > 0.001 {
		t.Errorf("the default differs from explicit modern/center/A4 on %.2f%% of pixels", d*100)
	}
	if fontsOf(t, implicit) != fontsOf(t, explicit) {
		t.Errorf("the default uses other fonts than explicit modern:\n%s\n%s", fontsOf(t, implicit), fontsOf(t, explicit))
	}
	if d := pixelDiff(t, implicit, basic, 1); d < themeDiffMin {
		t.Errorf("the default differs from basic on only %.2f%% of pixels: is modern the default?", d*100)
	}
}

// contractUserInfo: the account document has exactly the contract's fields
// with JSON types a strict client accepts.
func contractUserInfo(t *testing.T, a *api) {
	tests := []struct {
		plan          string
		credits       int // -1: the plan's monthly credits
		wantCredits   int64
		monthly       int64
		watermark     bool
		retentionDays int64
	}{
		{"free", -1, 50, 50, true, 0},
		{"pro", 7, 7, 5000, false, 30},
	}
	for _, tt := range tests {
		t.Run(tt.plan, func(t *testing.T) {
			created := time.Now()
			user, key := a.h.account(tt.plan, tt.credits)
			resp, body := a.call(t, "GET", "/v1/user/info", key, nil, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
				t.Errorf("Content-Type %q", ct)
			}
			dec := json.NewDecoder(strings.NewReader(string(body)))
			dec.UseNumber()
			var doc map[string]any
			if err := dec.Decode(&doc); err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			sameKeys(t, "user info", doc, "userId", "subscription")
			if doc["userId"] != user {
				t.Errorf("userId %#v, want %q", doc["userId"], user)
			}
			sub, ok := doc["subscription"].(map[string]any)
			if !ok {
				t.Fatalf("subscription is %T", doc["subscription"])
			}
			sameKeys(t, "subscription", sub, "planName", "currentCredits", "lastReset", "monthlyCredits", "hasWatermark", "hasDataRetention", "dataRetentionDays")
			if sub["planName"] != tt.plan {
				t.Errorf("planName %#v, want %q", sub["planName"], tt.plan)
			}
			wantInt(t, sub, "currentCredits", tt.wantCredits)
			wantInt(t, sub, "monthlyCredits", tt.monthly)
			wantInt(t, sub, "dataRetentionDays", tt.retentionDays)
			wantBool(t, sub, "hasWatermark", tt.watermark)
			wantBool(t, sub, "hasDataRetention", tt.retentionDays > 0)

			s, ok := sub["lastReset"].(string)
			if !ok {
				t.Fatalf("lastReset is %T, want a string", sub["lastReset"])
			}
			at, err := time.Parse(time.RFC3339, s)
			if err != nil || !strings.HasSuffix(s, "Z") || at.Location() != time.UTC {
				t.Fatalf("lastReset %q is not an RFC 3339 UTC time ending in Z (%v)", s, err)
			}
			if at.After(time.Now().Add(time.Minute)) || at.Before(created.Add(-time.Minute)) {
				t.Errorf("lastReset %s, want the account's creation time (about %s)", s, created.UTC().Format(time.RFC3339))
			}

			// HEAD, which HTTP requires wherever GET is served (it
			// answered 405): the GET's status and headers, no body, and
			// the key checked as the GET checks it.
			for _, h := range []struct {
				key    string
				status int
			}{{key, 200}, {"mdp_not_a_key", 401}} {
				resp, body := a.call(t, "HEAD", "/v1/user/info", h.key, nil, nil)
				if resp.StatusCode != h.status || len(body) != 0 {
					t.Errorf("HEAD with key %.8s…: status %d, %d bytes of body; want %d and none", h.key, resp.StatusCode, len(body), h.status)
				}
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Errorf("HEAD with key %.8s…: Content-Type %q, the GET's is JSON", h.key, ct)
				}
			}
		})
	}
}

// contractHostedURL: output=url answers {"url"}; the URL downloads the PDF
// with a plain GET and no Authorization, and lives at least 7 days (the
// plan's retention when longer); the conversion costs one credit.
func contractHostedURL(t *testing.T, a *api) {
	tests := []struct {
		plan    string
		minDays int
	}{
		{"free", 7},
		{"pro", 30},
	}
	for _, tt := range tests {
		t.Run(tt.plan, func(t *testing.T) {
			_, key := a.h.account(tt.plan, 3)
			marker := "Hosted " + tt.plan + " copy"
			resp, body := a.call(t, "POST", "/v1/pdf/markdown", key, map[string]string{"markdown": "# " + marker, "output": "url"}, nil)
			if resp.StatusCode != 200 {
				t.Fatalf("status %d: %s", resp.StatusCode, body)
			}
			var out map[string]any
			if err := json.Unmarshal(body, &out); err != nil {
				t.Fatalf("body %s: %v", body, err)
			}
			sameKeys(t, "url response", out, "url")
			url, _ := out["url"].(string)
			if !strings.HasPrefix(url, a.h.URL+"/v1/files/") {
				t.Fatalf("url %q is not a hosted file on %s", url, a.h.URL)
			}
			got, pdf := a.get(t, url)
			if got.StatusCode != 200 || got.Header.Get("Content-Type") != "application/pdf" {
				t.Fatalf("GET %s: %d %s", url, got.StatusCode, got.Header.Get("Content-Type"))
			}
			if text := pdfcheck.Text(t, pdf); !strings.Contains(text, marker) {
				t.Errorf("hosted PDF text %q lacks %q", text, marker)
			}
			exp, err := time.Parse(time.RFC1123, got.Header.Get("Expires"))
			if err != nil {
				t.Fatalf("Expires %q: %v", got.Header.Get("Expires"), err)
			}
			if min := time.Now().Add(time.Duration(tt.minDays)*24*time.Hour - time.Minute); exp.Before(min) {
				t.Errorf("hosted file expires %s, want at least %d days from now", exp, tt.minDays)
			}
			if c := a.credits(t, key); c != 2 {
				t.Errorf("balance %d after one conversion from 3", c)
			}
		})
	}
	// A title beyond ASCII names the download for every client: whole in
	// filename*, which browsers and wget read, and approximated in
	// filename, which curl -OJ reads (with filename* alone it saved the
	// file under its id, with no .pdf).
	t.Run("non-ASCII name", func(t *testing.T) {
		_, key := a.h.account("pro", 1)
		resp, body := a.call(t, "POST", "/v1/pdf/markdown", key, map[string]string{"markdown": "# Café résumé", "output": "url"}, nil)
		var out struct{ URL string }
		if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
		got, _ := a.get(t, out.URL)
		cd := got.Header.Get("Content-Disposition")
		if _, params, err := mime.ParseMediaType(cd); err != nil || params["filename"] != "Café résumé.pdf" {
			t.Errorf("Content-Disposition %q: filename %q (%v), want Café résumé.pdf", cd, params["filename"], err)
		}
		plain, _, _ := strings.Cut(cd, "; filename*=")
		if _, params, err := mime.ParseMediaType(plain); err != nil || params["filename"] != "Cafe resume.pdf" {
			t.Errorf("Content-Disposition %q: without filename*, filename %q (%v), want Cafe resume.pdf", cd, params["filename"], err)
		}
	})
}

// contractBinaryName: a binary answer names its PDF as the hosted copy of
// the same document is named, its replay too: without it curl -OJ saved it
// as "markdown", the path's last segment, with no .pdf.
func contractBinaryName(t *testing.T, a *api) {
	_, key := a.h.account("pro", 5)
	filename := func(resp *http.Response) string {
		t.Helper()
		cd := resp.Header.Get("Content-Disposition")
		disp, params, err := mime.ParseMediaType(cd)
		if err != nil || disp != "inline" {
			t.Errorf("Content-Disposition %q (%v), want inline with a filename", cd, err)
		}
		return params["filename"]
	}
	convert := func(body map[string]string, hdr map[string]string) *http.Response {
		t.Helper()
		resp, out := a.call(t, "POST", "/v1/pdf/markdown", key, body, hdr)
		if resp.StatusCode != 200 {
			t.Fatalf("status %d: %.300s", resp.StatusCode, out)
		}
		return resp
	}
	doc := "# Quarterly report\n\nFigures."
	resp, body := a.call(t, "POST", "/v1/pdf/markdown", key, map[string]string{"markdown": doc, "output": "url"}, nil)
	var out struct{ URL string }
	if resp.StatusCode != 200 || json.Unmarshal(body, &out) != nil {
		t.Fatalf("status %d: %s", resp.StatusCode, body)
	}
	hosted, _ := a.get(t, out.URL)
	want := filename(hosted)
	if want != "Quarterly report.pdf" {
		t.Fatalf("hosted copy named %q, want Quarterly report.pdf", want)
	}
	if got := filename(convert(map[string]string{"markdown": doc}, nil)); got != want {
		t.Errorf("binary answer named %q, its hosted copy %q", got, want)
	}
	idem := map[string]string{"Idempotency-Key": "binary-name"}
	first := filename(convert(map[string]string{"markdown": doc}, idem))
	replay := convert(map[string]string{"markdown": doc}, idem)
	if replay.Header.Get("Idempotent-Replayed") != "true" || filename(replay) != first || first != want {
		t.Errorf("replay (%q) named %q, the first answer %q, want %q", replay.Header.Get("Idempotent-Replayed"), filename(replay), first, want)
	}
	// A charset where the coding goes changes no byte: served, as before
	// compressed bodies were refused.
	if got := filename(convert(map[string]string{"markdown": doc}, map[string]string{"Content-Encoding": "utf-8"})); got != want {
		t.Errorf("with Content-Encoding: utf-8 named %q, want %q", got, want)
	}
	if got := filename(convert(map[string]string{"markdown": "no heading"}, nil)); got != "document.pdf" {
		t.Errorf("a document without a title named %q, want document.pdf", got)
	}
}

// credits reads the balance through /v1/user/info.
func (a *api) credits(t testing.TB, key string) int64 {
	t.Helper()
	resp, body := a.call(t, "GET", "/v1/user/info", key, nil, nil)
	if resp.StatusCode != 200 {
		t.Fatalf("user info: %d %s", resp.StatusCode, body)
	}
	var info struct {
		Subscription struct {
			CurrentCredits int64 `json:"currentCredits"`
		} `json:"subscription"`
	}
	if err := json.Unmarshal(body, &info); err != nil {
		t.Fatal(err)
	}
	return info.Subscription.CurrentCredits
}

type issuedKey struct {
	UserID string `json:"userId"`
	KeyID  string `json:"keyId"`
	APIKey string `json:"apiKey"`
}

// newKey issues another key for user with the operator command.
func (a *api) newKey(t testing.TB, user string) issuedKey {
	t.Helper()
	var k issuedKey
	if err := json.Unmarshal(a.h.mdpress("accounts", "keys", "create", user, "--json"), &k); err != nil || k.APIKey == "" || k.KeyID == "" {
		t.Fatalf("accounts keys create: %v", err)
	}
	return k
}

// apiError is the contract's error body.
type apiError struct {
	Error   string         `json:"error"`
	Details map[string]any `json:"details"`
	Message string         `json:"message"`
	Hint    string         `json:"hint"`
	Size    string         `json:"size"`
}

func readError(t testing.TB, body []byte) apiError {
	t.Helper()
	var e apiError
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("error body %q: %v", body, err)
	}
	return e
}

func sameKeys(t testing.TB, what string, m map[string]any, keys ...string) {
	t.Helper()
	want := map[string]bool{}
	for _, k := range keys {
		want[k] = true
		if _, ok := m[k]; !ok {
			t.Errorf("%s lacks %q", what, k)
		}
	}
	for k := range m {
		if !want[k] {
			t.Errorf("%s has an undocumented field %q", what, k)
		}
	}
}

// wantInt checks a JSON integer literal (decoded with UseNumber): no
// fraction, no exponent, the expected value.
func wantInt(t testing.TB, m map[string]any, key string, want int64) {
	t.Helper()
	n, ok := m[key].(json.Number)
	if !ok {
		t.Errorf("%s is %T, want an integer", key, m[key])
		return
	}
	v, err := strconv.ParseInt(n.String(), 10, 64)
	if err != nil {
		t.Errorf("%s = %s is not an integer literal", key, n)
		return
	}
	if v != want {
		t.Errorf("%s = %d, want %d", key, v, want)
	}
}

func wantBool(t testing.TB, m map[string]any, key string, want bool) {
	t.Helper()
	b, ok := m[key].(bool)
	if !ok {
		t.Errorf("%s is %T (%v), want a boolean", key, m[key], m[key])
		return
	}
	if b != want {
		t.Errorf("%s = %v, want %v", key, b, want)
	}
}

// threePages is Markdown long enough for three A4 pages or more on either
// backend,
// with no digits, so that any number found on a page is a page number.
func threePages() string {
	words := strings.Fields("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee zulu")
	var b strings.Builder
	b.WriteString("# Numbered pages\n\n")
	for p := range 3 {
		fmt.Fprintf(&b, "## Part %s\n\n", words[p])
		for para := range 6 {
			for w := range 90 {
				b.WriteString(words[(p*6+para*3+w)%len(words)])
				b.WriteByte(' ')
			}
			b.WriteString("\n\n")
		}
	}
	return b.String()
}
