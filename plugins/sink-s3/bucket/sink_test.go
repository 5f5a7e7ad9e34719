package bucket

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mdpress/mdpress/core/fileid"
	"github.com/mdpress/mdpress/sdk/stage"
)

const week = 7 * 24 * time.Hour

func TestPresignedDownload(t *testing.T) {
	s := configured(t, map[string]any{"delivery": "presign"})
	pdf := append([]byte("%PDF-1.7\n"), pattern(300_000)...)
	resp, err := s.Store(context.Background(), &stage.StoreRequest{
		Owner: "user-1", Filename: "Rapport été.pdf", PDF: pdf, TTL: week,
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.URL == "" {
		t.Fatal("presign mode returned no URL")
	}
	// Signed after the upload, for what is left of the week: a second
	// less, as the signature counts whole seconds.
	if got := expiresParam(t, resp.URL); got > 604800 || got < 604798 {
		t.Fatalf("X-Amz-Expires = %d, want 604799 or so", got)
	}

	// A plain GET, no credentials: the URL is the capability.
	get, err := http.Get(resp.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	body, _ := io.ReadAll(get.Body)
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET presigned URL: %d %s", get.StatusCode, body)
	}
	if !bytes.Equal(body, pdf) {
		t.Fatalf("downloaded %d bytes, not the %d stored", len(body), len(pdf))
	}
	if ct := get.Header.Get("Content-Type"); ct != "application/pdf" {
		t.Fatalf("Content-Type %q", ct)
	}
	_, params, err := mime.ParseMediaType(get.Header.Get("Content-Disposition"))
	if err != nil || params["filename"] != "Rapport été.pdf" {
		t.Fatalf("Content-Disposition %q (%v): want the document's name", get.Header.Get("Content-Disposition"), err)
	}

	// The same file through Open carries the metadata.
	got, open := readRange(t, s, resp.ID, 0, -1)
	sum := sha256.Sum256(pdf)
	if !bytes.Equal(got, pdf) || open.Filename != "Rapport été.pdf" || open.ETag != `"`+hex.EncodeToString(sum[:])+`"` {
		t.Fatalf("open: %d bytes, filename %q, etag %s", len(got), open.Filename, open.ETag)
	}
}

func expiresParam(t *testing.T, raw string) int {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	n, err := strconv.Atoi(u.Query().Get("X-Amz-Expires"))
	if err != nil {
		t.Fatalf("URL %s has no X-Amz-Expires", raw)
	}
	return n
}

func TestPresignNeverOverSevenDays(t *testing.T) {
	s := configured(t, map[string]any{"delivery": "presign"})
	tests := []struct {
		ttl     time.Duration
		expires int // 0: no presigned URL, the host serves the file
	}{
		{time.Hour, 3599},
		{week - time.Second, 604798},
		{week, 604799},
		{week + time.Second, 0},
		{30 * 24 * time.Hour, 0},
	}
	for _, tt := range tests {
		t.Run(tt.ttl.String(), func(t *testing.T) {
			resp := store(t, s, []byte("%PDF-1.7"), tt.ttl)
			if tt.expires == 0 {
				if resp.URL != "" {
					t.Fatalf("a file kept %v got a presigned URL, which dies after 7 days: %s", tt.ttl, resp.URL)
				}
				return
			}
			// What is left after the upload, in whole seconds: a second
			// less than the TTL, or two on a slow upload.
			got := expiresParam(t, resp.URL)
			if got > tt.expires || got < tt.expires-1 {
				t.Fatalf("X-Amz-Expires = %d, want %d", got, tt.expires)
			}
		})
	}
}

// A presigned URL lives from its signing, after the upload: it gets what is
// left of the file's life, or it would download the file for as long as the
// upload took after the file expired (the host answering 410 meanwhile).
func TestPresignEndsWithTheFile(t *testing.T) {
	c := newClock()
	// Every reading of the clock is a second later, as on a slow upload.
	tick := func() time.Time { c.Advance(time.Second); return c.Now() }
	s := configured(t, map[string]any{"delivery": "presign"}, WithClock(tick))
	resp := store(t, s, []byte("%PDF-1.7"), time.Hour)
	if got := expiresParam(t, resp.URL); got != 3599 {
		t.Fatalf("X-Amz-Expires = %d, want 3599: the hour less the second the upload took", got)
	}
	s = configured(t, map[string]any{"delivery": "presign"}, WithClock(tick))
	if resp := store(t, s, []byte("%PDF-1.7"), time.Second); resp.URL != "" {
		t.Fatalf("a file expired by the end of its upload got a presigned URL: %s", resp.URL)
	}
}

func TestProxyOpenRanges(t *testing.T) {
	c := newClock()
	s := configured(t, map[string]any{"delivery": "proxy"}, WithClock(c.Now))
	pdf := pattern(1000)
	resp := store(t, s, pdf, time.Hour)
	if resp.URL != "" {
		t.Fatalf("proxy mode returned URL %q; the host builds it", resp.URL)
	}
	if !resp.ExpiresAt.Equal(c.Now().Add(time.Hour)) {
		t.Fatalf("ExpiresAt %v", resp.ExpiresAt)
	}

	tests := []struct {
		name        string
		off, length int64
		want        []byte
	}{
		{"whole", 0, -1, pdf},
		{"start", 0, 100, pdf[:100]},
		{"middle", 400, 200, pdf[400:600]},
		{"suffix to end", 900, -1, pdf[900:]},
		{"last byte", 999, 1, pdf[999:]},
		{"length past end is clamped", 950, 100, pdf[950:]},
		{"empty at end", 1000, -1, []byte{}},
		{"zero length", 10, 0, []byte{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, open := readRange(t, s, resp.ID, tt.off, tt.length)
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("got %d bytes, want %d", len(got), len(tt.want))
			}
			if open.Size != 1000 || open.Filename != "Report.pdf" ||
				!open.Created.Equal(c.Now()) || !open.ExpiresAt.Equal(resp.ExpiresAt) {
				t.Fatalf("metadata %+v", open)
			}
		})
	}
	t.Run("offset past end", func(t *testing.T) {
		_, err := s.Open(context.Background(), &stage.OpenRequest{ID: resp.ID, Offset: 1001, Length: -1})
		wantCode(t, err, stage.CodeInvalid)
	})
}

func TestMultipartUpload(t *testing.T) {
	s := configured(t, map[string]any{"delivery": "proxy", "partSizeMB": 5})
	pdf := pattern(20 << 20)
	id := store(t, s, pdf, time.Hour).ID

	h, err := head(t, s, id)
	if err != nil {
		t.Fatal(err)
	}
	// A multipart object's ETag ends in -<parts>.
	if etag := aws.ToString(h.ETag); !strings.HasSuffix(strings.Trim(etag, `"`), "-4") {
		t.Fatalf("ETag %s: want a 4-part multipart upload", etag)
	}
	if cc := aws.ToString(h.CacheControl); cc != "private" || h.ExpiresString == nil {
		t.Fatalf("Cache-Control %q, Expires %v: a multipart object lost what a presigned download needs", cc, h.ExpiresString)
	}
	got, _ := readRange(t, s, id, 0, -1)
	if !bytes.Equal(got, pdf) {
		t.Fatal("multipart object reads back different bytes")
	}
	// A range across the first part boundary.
	got, _ = readRange(t, s, id, 5<<20-10, 20)
	if !bytes.Equal(got, pdf[5<<20-10:5<<20+10]) {
		t.Fatal("range across a part boundary differs")
	}
}

func TestNotFound(t *testing.T) {
	counter := &countingClient{}
	s := configured(t, nil, WithHTTPClient(counter))
	id := store(t, s, []byte("%PDF-1.7"), time.Hour).ID

	t.Run("unknown id", func(t *testing.T) {
		before := counter.n.Load()
		_, err := s.Open(context.Background(), &stage.OpenRequest{ID: fileid.New(), Length: -1})
		wantCode(t, err, stage.CodeNotFound)
		if counter.n.Load() == before {
			t.Fatal("the request counter saw no request; the malformed-id checks below prove nothing")
		}
	})
	bad := []string{
		"", "../../etc/passwd", "%2e%2e%2f%2e%2e%2fetc", "../" + id[3:], id[:2] + "/" + id[3:],
		id[:31], id + "0", strings.ToUpper(id), id[:31] + "?", "abcdefghijklmnopqrstuvwxyz",
	}
	for _, badID := range bad {
		t.Run("malformed "+badID, func(t *testing.T) {
			before := counter.n.Load()
			_, err := s.Open(context.Background(), &stage.OpenRequest{ID: badID, Length: -1})
			wantCode(t, err, stage.CodeNotFound)
			if n := counter.n.Load() - before; n != 0 {
				t.Fatalf("a malformed id reached S3 in %d requests", n)
			}
		})
	}
}

func TestExpiryAndSweep(t *testing.T) {
	c := newClock()
	s := configured(t, map[string]any{"prefix": "hosted/pdf"}, WithClock(c.Now))
	short := store(t, s, []byte("%PDF short"), time.Hour).ID
	long := store(t, s, []byte("%PDF long"), 48*time.Hour).ID
	st := s.cur.Load()
	// Objects the sink did not write must survive any sweep.
	foreign := []string{"hosted/pdf/notes.txt", "hosted/pdf/" + short + ".pdf.bak", "other/" + fileid.New() + ".pdf"}
	for _, k := range foreign {
		if _, err := st.client.PutObject(context.Background(), &s3.PutObjectInput{
			Bucket: &st.cfg.Bucket, Key: aws.String(k), Body: strings.NewReader("x"),
		}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := head(t, s, short); err != nil {
		t.Fatalf("object not under the prefix: %v", err)
	}
	if n, err := s.Sweep(context.Background()); err != nil || n != 0 {
		t.Fatalf("sweep before expiry removed %d (%v)", n, err)
	}

	c.Advance(time.Hour)
	_, err := s.Open(context.Background(), &stage.OpenRequest{ID: short, Length: -1})
	wantCode(t, err, stage.CodeGone)

	n, err := s.Sweep(context.Background())
	if err != nil || n != 1 {
		t.Fatalf("sweep removed %d (%v), want 1", n, err)
	}
	if _, err := head(t, s, short); !isNotFound(err) {
		t.Fatalf("expired object still there: %v", err)
	}
	_, err = s.Open(context.Background(), &stage.OpenRequest{ID: short, Length: -1})
	wantCode(t, err, stage.CodeNotFound)
	readRange(t, s, long, 0, -1)
	for _, k := range foreign {
		if _, err := st.client.HeadObject(context.Background(), &s3.HeadObjectInput{Bucket: &st.cfg.Bucket, Key: aws.String(k)}); err != nil {
			t.Fatalf("sweep touched foreign object %s: %v", k, err)
		}
	}
}

func TestBackgroundSweeper(t *testing.T) {
	c := newClock()
	s := configured(t, map[string]any{"sweepInterval": "20ms"}, WithClock(c.Now))
	id := store(t, s, []byte("%PDF"), time.Hour).ID
	c.Advance(2 * time.Hour)
	deadline := time.Now().Add(5 * time.Second)
	for {
		_, err := head(t, s, id)
		if isNotFound(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sweeper did not delete the expired object within 5s (%v)", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestSweepAbortsStaleUploads(t *testing.T) {
	c := newClock()
	s := configured(t, nil, WithClock(c.Now))
	st := s.cur.Load()
	key := st.key(fileid.New())
	up, err := st.client.CreateMultipartUpload(context.Background(), &s3.CreateMultipartUploadInput{Bucket: &st.cfg.Bucket, Key: &key})
	if err != nil {
		t.Fatal(err)
	}
	uploads := func() int {
		out, err := st.client.ListMultipartUploads(context.Background(), &s3.ListMultipartUploadsInput{Bucket: &st.cfg.Bucket})
		if err != nil {
			t.Fatal(err)
		}
		return len(out.Uploads)
	}
	if _, err := s.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if uploads() != 1 {
		t.Fatalf("a fresh upload (%s) was aborted: it may be a Store in progress", aws.ToString(up.UploadId))
	}
	c.Advance(staleUpload + time.Hour)
	if _, err := s.Sweep(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := uploads(); n != 0 {
		t.Fatalf("%d stale uploads left", n)
	}
}

// cancelOnPut ends a context once the server has answered a PUT: the
// caller's deadline passing just as the upload lands.
type cancelOnPut struct {
	cancel atomic.Pointer[context.CancelFunc]
}

func (c *cancelOnPut) Do(req *http.Request) (*http.Response, error) {
	resp, err := http.DefaultClient.Do(req)
	if f := c.cancel.Load(); f != nil && req.Method == http.MethodPut {
		(*f)()
	}
	return resp, err
}

// A Store whose caller gave up during the upload leaves no object: the
// request was refunded and its id never handed out, so the object would
// only take up room until it expired.
func TestStoreAbandonedLeavesNothing(t *testing.T) {
	for _, delivery := range []string{"presign", "proxy"} {
		t.Run(delivery, func(t *testing.T) {
			hc := &cancelOnPut{}
			s := configured(t, map[string]any{"delivery": delivery, "prefix": "hosted/"}, WithHTTPClient(hc))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			hc.cancel.Store(&cancel)
			if _, err := s.Store(ctx, &stage.StoreRequest{Owner: "u", Filename: "a.pdf", PDF: []byte("%PDF-1.7"), TTL: time.Hour}); err == nil {
				t.Fatal("a Store its caller gave up on succeeded")
			}
			st := s.cur.Load()
			list, err := st.client.ListObjectsV2(context.Background(), &s3.ListObjectsV2Input{Bucket: &st.cfg.Bucket})
			if err != nil {
				t.Fatal(err)
			}
			for _, o := range list.Contents {
				t.Errorf("an abandoned Store left %s", aws.ToString(o.Key))
			}
		})
	}
}

// A presigned download goes through whatever caches stand between S3 and
// the client: it must tell shared ones not to keep the PDF, and browsers
// not to keep it past the file's expiry, as the host's own route does.
func TestPresignedDownloadCaching(t *testing.T) {
	s := configured(t, map[string]any{"delivery": "presign"})
	resp := store(t, s, []byte("%PDF-1.7"), time.Hour)
	get, err := http.Get(resp.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	_, _ = io.Copy(io.Discard, get.Body)
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET presigned URL: %d", get.StatusCode)
	}
	if cc := get.Header.Get("Cache-Control"); !strings.Contains(cc, "private") {
		t.Fatalf("Cache-Control %q: a shared cache may keep the PDF", cc)
	}
	exp, err := http.ParseTime(get.Header.Get("Expires"))
	if err != nil {
		t.Fatalf("Expires %q: %v", get.Header.Get("Expires"), err)
	}
	if d := exp.Sub(resp.ExpiresAt); d > time.Second || d < -time.Second {
		t.Fatalf("Expires %v, the file expires at %v", exp, resp.ExpiresAt)
	}
}
