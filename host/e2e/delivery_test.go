package e2e

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// deliverySinks are the sinks the delivery contract runs on. Choosing one is
// a flag and a config block, nothing else: the test body is the same.
var deliverySinks = []struct {
	name string
	// opts selects the sink; s3 cases start their own server (or skip)
	// and return the bucket's URL.
	opts func(t *testing.T) (opts []hostOpt, bucketURL string)
	// presign: URLs of files kept 7 days point at the S3 server.
	presign bool
}{
	{"disk", func(*testing.T) ([]hostOpt, string) { return []hostOpt{withArgs("--sink", "disk")}, "" }, false},
	{"s3-proxy", func(t *testing.T) ([]hostOpt, string) { return s3Sink(t, "proxy") }, false},
	{"s3-presign", func(t *testing.T) ([]hostOpt, string) { return s3Sink(t, "presign") }, true},
}

// TestDeliveryHostedURL proves output=url on every sink: the URL downloads
// with a plain GET (ranges, conditional requests, HEAD), lives at least 7
// days (30 with the pro plan's retention), cannot be reached by guessing
// or by path tricks, and still works after the host restarts.
func TestDeliveryHostedURL(t *testing.T) {
	pdfcheck.Require(t)
	for _, sink := range deliverySinks {
		t.Run(sink.name, func(t *testing.T) {
			opts, bucketURL := sink.opts(t)
			opts = append(opts, withArgs("--backend", "fpdf"), withEnv("MDPRESS_PUBLIC_URL="+deliveryPublicURL))
			dir := t.TempDir()
			h := startHost(t, append(opts, withDataDir(dir))...)
			freeUser, free := h.account("free", 5)
			proUser, pro := h.account("pro", 5)
			freeURL := deliveryConvert(t, h, free, "# Quarterly Report\n\nRevenue grew in every region.\n")
			proURL := deliveryConvert(t, h, pro, "# Annual Plan\n\nHeadcount stays flat.\n")

			var freeID string
			t.Run("url shape", func(t *testing.T) {
				if sink.presign {
					freeID = checkPresigned(t, freeURL, bucketURL)
				} else {
					freeID = hostedID(t, freeURL)
				}
				// A file kept past 7 days outlives any presigned URL, so
				// every sink hands out the host's own URL for it.
				if proID := hostedID(t, proURL); proID == freeID {
					t.Errorf("two conversions got the same id %s", proID)
				}
			})
			if t.Failed() {
				t.FailNow()
			}

			served := map[string][]byte{} // URL -> the bytes it served
			t.Run("download", func(t *testing.T) {
				served[freeURL] = checkDownload(t, onHost(h, freeURL), hostedFile{
					text: "Revenue grew in every region", filename: "Quarterly Report.pdf", viaHost: !sink.presign, owner: freeUser,
				})
				served[proURL] = checkDownload(t, onHost(h, proURL), hostedFile{
					text: "Headcount stays flat", filename: "Annual Plan.pdf", viaHost: true, owner: proUser,
				})
			})

			t.Run("lifetime", func(t *testing.T) {
				// The host serves every stored file by id, also one whose
				// client got a presigned URL, and says when it expires.
				checkExpires(t, h.URL+"/v1/files/"+freeID, 7)
				checkExpires(t, onHost(h, proURL), 30)
			})

			t.Run("unguessable", func(t *testing.T) { checkUnguessable(t, h, freeID) })

			h.stop()
			h2 := startHost(t, append(opts, withDataDir(dir))...)
			if h2.URL == h.URL {
				t.Fatalf("the restarted host kept the address %s; the test cannot tell URLs apart", h.URL)
			}
			t.Run("after restart", func(t *testing.T) {
				for _, u := range []string{freeURL, proURL} {
					resp, body := fetch(t, "GET", onHost(h2, u), nil)
					if resp.StatusCode != http.StatusOK || !bytes.Equal(body, served[u]) {
						t.Errorf("GET %s after a restart: %d, %d bytes; want the %d bytes served before", onHost(h2, u), resp.StatusCode, len(body), len(served[u]))
					}
				}
				// The base of new URLs is still the configured public URL,
				// not the new port.
				hostedID(t, deliveryConvert(t, h2, pro, "# After restart\n"))
			})
		})
	}
}

// checkPresigned checks a presigned S3 URL of a file kept 7 days and
// returns the file's id.
func checkPresigned(t *testing.T, raw, bucketURL string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(raw, bucketURL+"hosted/") {
		t.Fatalf("url %q: want a presigned URL of an object under %shosted/", raw, bucketURL)
	}
	q := u.Query()
	exp, err := strconv.Atoi(q.Get("X-Amz-Expires"))
	if err != nil || q.Get("X-Amz-Signature") == "" {
		t.Fatalf("url %q: not a SigV4 presigned URL", raw)
	}
	// SigV4 allows 7 days at most; the free plan's file lives exactly 7.
	if week := 7 * 24 * 3600; exp > week || exp < week-60 {
		t.Errorf("X-Amz-Expires=%d, want 7 days (604800 s), the file's lifetime and the SigV4 limit", exp)
	}
	id, ok := strings.CutSuffix(path.Base(u.Path), ".pdf")
	if !ok || !fileIDRE.MatchString(id) {
		t.Fatalf("url path %q: want .../hosted/<32 lowercase hex>.pdf", u.Path)
	}
	return id
}

// hostedFile is what a hosted URL must serve.
type hostedFile struct {
	text     string // in the PDF's text
	filename string // Content-Disposition's filename
	viaHost  bool   // served by mdpress (not by S3 directly)
	owner    string // the user id, which no header may tell the URL's holder
}

// checkDownload fetches url the way browsers and download managers do:
// plain GET, HEAD, conditional GET, byte ranges. It returns the file.
func checkDownload(t *testing.T, u string, want hostedFile) []byte {
	t.Helper()
	resp, pdf := fetch(t, "GET", u, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %s", u, resp.StatusCode, pdf)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/pdf" {
		t.Errorf("Content-Type %q", ct)
	}
	if cl := resp.Header.Get("Content-Length"); cl != strconv.Itoa(len(pdf)) {
		t.Errorf("Content-Length %q, body %d bytes", cl, len(pdf))
	}
	etag := resp.Header.Get("ETag")
	if etag == "" {
		t.Error("no ETag")
	}
	_, params, err := mime.ParseMediaType(resp.Header.Get("Content-Disposition"))
	if err != nil || params["filename"] != want.filename {
		t.Errorf("Content-Disposition %q: want filename %q", resp.Header.Get("Content-Disposition"), want.filename)
	}
	if text := pdfcheck.Text(t, pdf); !strings.Contains(text, want.text) {
		t.Errorf("PDF text %q lacks %q", text, want.text)
	}
	// Also from S3: a presigned download is no less private.
	if cc := resp.Header.Get("Cache-Control"); !strings.Contains(cc, "private") && !strings.Contains(cc, "no-store") {
		t.Errorf("Cache-Control %q: a shared cache may keep the PDF", cc)
	}
	for k, vs := range resp.Header {
		for _, v := range vs {
			if want.owner != "" && strings.Contains(v, want.owner) {
				t.Errorf("header %s: %s tells the URL's holder the account that made the PDF", k, v)
			}
		}
	}
	size := len(pdf)

	// A presigned URL signs the GET method only, so HEAD is the host's.
	if want.viaHost {
		head, body := fetch(t, "HEAD", u, nil)
		if head.StatusCode != http.StatusOK || len(body) != 0 {
			t.Errorf("HEAD: %d with %d body bytes", head.StatusCode, len(body))
		}
		if head.Header.Get("Content-Length") != strconv.Itoa(size) || head.Header.Get("ETag") != etag ||
			head.Header.Get("Content-Type") != "application/pdf" || head.Header.Get("Content-Disposition") != resp.Header.Get("Content-Disposition") {
			t.Errorf("HEAD headers %v differ from GET's %v", head.Header, resp.Header)
		}
	}

	if r, body := fetch(t, "GET", u, map[string]string{"If-None-Match": etag}); r.StatusCode != http.StatusNotModified || len(body) != 0 {
		t.Errorf("If-None-Match %s: %d with %d body bytes, want 304 and none", etag, r.StatusCode, len(body))
	}
	if r, _ := fetch(t, "GET", u, map[string]string{"If-None-Match": `"some-other-version"`}); r.StatusCode != http.StatusOK {
		t.Errorf("If-None-Match with another tag: %d, want 200", r.StatusCode)
	}

	ranges := []struct {
		spec      string
		from, end int // the bytes pdf[from:end]
	}{
		{"bytes=0-99", 0, 100},
		{"bytes=-50", size - 50, size},
		{"bytes=100-", 100, size},
		{fmt.Sprintf("bytes=%d-%d", size/2, size/2+9), size / 2, size/2 + 10},
	}
	for _, rg := range ranges {
		r, body := fetch(t, "GET", u, map[string]string{"Range": rg.spec})
		wantCR := fmt.Sprintf("bytes %d-%d/%d", rg.from, rg.end-1, size)
		if r.StatusCode != http.StatusPartialContent || r.Header.Get("Content-Range") != wantCR {
			t.Errorf("Range %s: %d Content-Range %q, want 206 %q", rg.spec, r.StatusCode, r.Header.Get("Content-Range"), wantCR)
			continue
		}
		if !bytes.Equal(body, pdf[rg.from:rg.end]) || r.Header.Get("Content-Length") != strconv.Itoa(len(body)) {
			t.Errorf("Range %s: %d bytes (Content-Length %s), want bytes %d..%d of the file", rg.spec, len(body), r.Header.Get("Content-Length"), rg.from, rg.end)
		}
	}
	r, body := fetch(t, "GET", u, map[string]string{"Range": fmt.Sprintf("bytes=%d-", size)})
	if r.StatusCode != http.StatusRequestedRangeNotSatisfiable || bytes.Contains(body, []byte("%PDF")) {
		t.Errorf("Range past the end: %d (%d bytes), want 416 and no file", r.StatusCode, len(body))
	}
	if want.viaHost && r.Header.Get("Content-Range") != fmt.Sprintf("bytes */%d", size) {
		t.Errorf("416 Content-Range %q, want bytes */%d", r.Header.Get("Content-Range"), size)
	}
	return pdf
}

// checkExpires checks that the file at u lives days from now (within a
// minute: the TTL is the larger of 7 days and the plan's retention).
func checkExpires(t *testing.T, u string, days int) {
	t.Helper()
	resp, _ := fetch(t, "HEAD", u, nil)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("HEAD %s: %d", u, resp.StatusCode)
	}
	exp, err := http.ParseTime(resp.Header.Get("Expires"))
	if err != nil {
		t.Fatalf("Expires %q: %v", resp.Header.Get("Expires"), err)
	}
	want := time.Now().Add(time.Duration(days) * 24 * time.Hour)
	if d := exp.Sub(want); d < -time.Minute || d > time.Minute {
		t.Errorf("%s expires %s, want %d days from now (%s)", u, exp.UTC(), days, want.UTC().Format(http.TimeFormat))
	}
}

// checkUnguessable sends ids that were never issued and paths that try to
// leave the files directory. Each gets the API's JSON 404, never a file.
func checkUnguessable(t *testing.T, h *host, issued string) {
	t.Helper()
	var random [16]byte
	_, _ = rand.Read(random[:])
	paths := []string{
		"/v1/files/../..",
		"/v1/files/../../../../etc/passwd",
		"/v1/files/..%2f..%2fetc%2fpasswd",
		"/v1/files/%2e%2e",
		"/v1/files/%2e%2e%2f%2e%2e%2f%2e%2e%2fetc%2fpasswd",
		"/v1/files/..%5c..%5cetc%5cpasswd",
		"/v1/files/%2fetc%2fpasswd",
		"/v1/files/" + issued[:31],                   // too short
		"/v1/files/" + issued + "0",                  // too long
		"/v1/files/" + issued + ".pdf",               // the on-disk name
		"/v1/files/" + issued + "%00",                // NUL
		"/v1/files/" + strings.ToUpper(issued),       // case variant of a real id
		"/v1/files/" + hex.EncodeToString(random[:]), // well-formed, never issued
	}
	for _, p := range paths {
		resp, body := rawGet(t, h, p)
		var e struct {
			Error string `json:"error"`
		}
		if resp.StatusCode != http.StatusNotFound || !strings.HasPrefix(resp.Header.Get("Content-Type"), "application/json") ||
			json.Unmarshal(body, &e) != nil || e.Error == "" {
			t.Errorf("GET %s: %d %q %q, want a JSON 404", p, resp.StatusCode, resp.Header.Get("Content-Type"), body)
		}
		if bytes.Contains(body, []byte("root:")) || bytes.Contains(body, []byte("%PDF")) {
			t.Errorf("GET %s served a file: %q", p, body)
		}
	}
}
