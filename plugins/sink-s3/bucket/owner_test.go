package bucket

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mdpress/mdpress/core/fileid"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Whoever holds a presigned URL gets the object's metadata as x-amz-meta-*
// headers: none of them may name the account that made the PDF.
func TestPresignedDownloadHidesOwner(t *testing.T) {
	s := configured(t, map[string]any{"delivery": "presign"})
	const owner = "usr_mckskfrra2tac4en3atg5ve2xu"
	resp, err := s.Store(context.Background(), &stage.StoreRequest{Owner: owner, Filename: "Report.pdf", PDF: []byte("%PDF-1.7"), TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	get, err := http.Get(resp.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer get.Body.Close()
	_, _ = io.Copy(io.Discard, get.Body)
	if get.StatusCode != http.StatusOK {
		t.Fatalf("GET presigned URL: %d", get.StatusCode)
	}
	for k, vs := range get.Header {
		for _, v := range vs {
			if strings.Contains(v, owner) || strings.Contains(v, "mckskfrra2tac4en3atg5ve2xu") {
				t.Fatalf("the presigned download tells its holder the owner: %s: %s", k, v)
			}
		}
	}

	// The owner is still on the object for those who know the account.
	h, err := head(t, s, resp.ID)
	if err != nil {
		t.Fatal(err)
	}
	m, err := decodeMeta(h.Metadata)
	if err != nil {
		t.Fatal(err)
	}
	if !m.ownedBy(resp.ID, owner) || m.ownedBy(resp.ID, "usr_other") {
		t.Fatalf("metadata %v: ownership does not check out", h.Metadata)
	}
	// Per file: two files of one account cannot be linked by their digests.
	other, err := s.Store(context.Background(), &stage.StoreRequest{Owner: owner, Filename: "Report.pdf", PDF: []byte("%PDF-1.7"), TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	h2, err := head(t, s, other.ID)
	if err != nil {
		t.Fatal(err)
	}
	if d := h.Metadata[metaOwnerDigest]; d == "" || d == h2.Metadata[metaOwnerDigest] {
		t.Fatalf("owner digests %q and %q: want two different ones", d, h2.Metadata[metaOwnerDigest])
	}
}

// Objects stored before the owner became a digest carry it in clear: they
// are served, swept and deleted as before, and their owner still checks.
func TestLegacyOwnerObject(t *testing.T) {
	c := newClock()
	s := configured(t, nil, WithClock(c.Now))
	st := s.cur.Load()
	now := c.Now()
	put := func() string {
		id := fileid.New()
		if _, err := st.client.PutObject(context.Background(), &s3.PutObjectInput{
			Bucket: &st.cfg.Bucket, Key: aws.String(st.key(id)), Body: strings.NewReader("%PDF-1.7 old"),
			ContentType: aws.String("application/pdf"),
			Metadata: map[string]string{
				metaLegacyOwner: "usr_old",
				metaFilename:    "Old.pdf",
				metaCreated:     now.Format(time.RFC3339Nano),
				metaExpires:     now.Add(time.Hour).Format(time.RFC3339Nano),
				metaSHA256:      "ab",
			},
		}); err != nil {
			t.Fatal(err)
		}
		return id
	}
	kept, deleted, expired := put(), put(), put()

	body, open := readRange(t, s, kept, 0, -1)
	if string(body) != "%PDF-1.7 old" || open.Filename != "Old.pdf" {
		t.Fatalf("old object opened as %q, %q", body, open.Filename)
	}
	h, err := head(t, s, kept)
	if err != nil {
		t.Fatal(err)
	}
	m, err := decodeMeta(h.Metadata)
	if err != nil || !m.ownedBy(kept, "usr_old") || m.ownedBy(kept, "usr_other") {
		t.Fatalf("old object's owner does not check out (%v)", err)
	}

	if err := s.Delete(context.Background(), &stage.DeleteRequest{ID: deleted}); err != nil {
		t.Fatal(err)
	}
	if _, err := head(t, s, deleted); !isNotFound(err) {
		t.Fatalf("deleted old object still there: %v", err)
	}

	c.Advance(time.Hour)
	_, err = s.Open(context.Background(), &stage.OpenRequest{ID: expired, Length: -1})
	wantCode(t, err, stage.CodeGone)
	if n, err := s.Sweep(context.Background()); err != nil || n != 2 {
		t.Fatalf("sweep removed %d (%v), want the 2 expired old objects", n, err)
	}
}
