package bucket

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mdpress/mdpress/core/fileid"
	"github.com/mdpress/mdpress/sdk/stage"
)

// MaxPresign is the longest validity SigV4 allows a presigned URL. The SDK
// signs longer ones, which S3 then refuses, so the sink never asks for more.
const MaxPresign = 7 * 24 * time.Hour

// Store uploads the PDF as one object and, in presign mode, returns a URL
// that downloads it without credentials.
func (s *Sink) Store(ctx context.Context, req *stage.StoreRequest) (*stage.StoreResponse, error) {
	st := s.cur.Load()
	if st == nil {
		return nil, stage.Errorf(stage.CodeUnavailable, "sink-s3 is not configured")
	}
	if len(req.PDF) == 0 {
		return nil, stage.Errorf(stage.CodeInvalid, "no PDF to store")
	}
	if req.TTL <= 0 {
		return nil, stage.Errorf(stage.CodeInvalid, "retention must be positive")
	}
	id := fileid.New()
	key := st.key(id)
	sum := sha256.Sum256(req.PDF)
	now := s.now().UTC()
	m := meta{
		OwnerDigest: ownerDigest(id, req.Owner),
		Filename:    req.Filename,
		Created:     now,
		Expires:     now.Add(req.TTL),
		SHA256:      hex.EncodeToString(sum[:]),
	}
	_, err := st.uploader.Upload(ctx, &s3.PutObjectInput{
		Bucket:             &st.cfg.Bucket,
		Key:                &key,
		Body:               bytes.NewReader(req.PDF),
		ContentType:        aws.String("application/pdf"),
		ContentDisposition: aws.String(contentDisposition(req.Filename)),
		// S3 sends these with a presigned download, which nothing else
		// describes: no shared cache keeps the PDF, no browser past its
		// expiry, as the host's own route says for the files it serves.
		CacheControl: aws.String("private"),
		Expires:      aws.Time(m.Expires),
		Metadata:     m.encode(),
	})
	if ctx.Err() != nil {
		// The caller gave up during the upload (the sink timeout, the client
		// gone) and has refunded the request: no one gets this id, yet the
		// server may have kept the object, which would take up room until
		// it expired, days away.
		s.discard(ctx, st, key)
		return nil, ctx.Err()
	}
	if err != nil {
		return nil, stage.Wrap(stage.CodeUnavailable, err, "store file")
	}
	resp := &stage.StoreResponse{ID: id, ExpiresAt: m.Expires}
	// A presigned URL's life starts when it is signed, after the upload:
	// given the whole TTL, it would open the file for as long as the
	// upload took after the file expired, when the host already says 410.
	left := presignExpiry(m.Expires.Sub(s.now()))
	if st.cfg.Delivery == DeliveryPresign && req.TTL <= MaxPresign && left > 0 {
		// A presigned URL cannot outlive 7 days; a file kept longer is
		// served by the host instead, so its link lasts as long as it does.
		signed, err := st.presign.PresignGetObject(ctx, &s3.GetObjectInput{Bucket: &st.cfg.Bucket, Key: &key},
			s3.WithPresignExpires(left))
		if err != nil {
			s.discard(ctx, st, key)
			return nil, stage.Wrap(stage.CodeInternal, err, "store file")
		}
		resp.URL = signed.URL
	}
	return resp, nil
}

// discard deletes the object of a Store that failed after its upload, on a
// context of its own: the request's has often ended by then.
func (s *Sink) discard(ctx context.Context, st *state, key string) {
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), discardTimeout)
	defer cancel()
	if _, err := st.client.DeleteObject(dctx, &s3.DeleteObjectInput{Bucket: &st.cfg.Bucket, Key: &key}); err != nil {
		s.log.WarnContext(ctx, "delete the object of a failed store", "key", key, "err", err)
	}
}

// discardTimeout bounds the delete of a failed Store's object.
const discardTimeout = 10 * time.Second

// presignExpiry is how long a presigned URL for a file with left to live
// lasts: no longer than the file, and never past the SigV4 limit. 0 (the
// SDK would read it as its default of 15 minutes) means no presigned URL.
func presignExpiry(left time.Duration) time.Duration {
	return max(0, min(left.Truncate(time.Second), MaxPresign))
}
