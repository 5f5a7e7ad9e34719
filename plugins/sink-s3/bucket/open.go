package bucket

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/mdpress/mdpress/core/fileid"
	"github.com/mdpress/mdpress/sdk/stage"
)

// Open reads the object's metadata, refuses it when expired, and streams
// the requested range with a ranged GetObject.
func (s *Sink) Open(ctx context.Context, req *stage.OpenRequest) (*stage.OpenResponse, error) {
	// The id is checked before any request: nothing else may become a key.
	if !fileid.Valid(req.ID) {
		return nil, notFound()
	}
	if req.Offset < 0 || req.Length < -1 {
		return nil, stage.Errorf(stage.CodeInvalid, "invalid byte range")
	}
	st := s.cur.Load()
	if st == nil {
		return nil, stage.Errorf(stage.CodeUnavailable, "sink-s3 is not configured")
	}
	key := st.key(req.ID)
	head, err := st.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &st.cfg.Bucket, Key: &key})
	if err != nil {
		return nil, s3Error(err, "open file")
	}
	m, err := decodeMeta(head.Metadata)
	if err != nil {
		return nil, stage.Wrap(stage.CodeInternal, fmt.Errorf("%s: %w", key, err), "open file")
	}
	if !s.now().Before(m.Expires) {
		return nil, stage.Errorf(stage.CodeGone, "file expired")
	}
	size := aws.ToInt64(head.ContentLength)
	if req.Offset > size {
		return nil, stage.Errorf(stage.CodeInvalid, "byte range starts past the end of the file")
	}
	length := req.Length
	if length < 0 || length > size-req.Offset {
		length = size - req.Offset
	}
	resp := &stage.OpenResponse{
		Size:      size,
		Filename:  m.Filename,
		ETag:      `"` + m.SHA256 + `"`,
		Created:   m.Created,
		ExpiresAt: m.Expires,
		Body:      http.NoBody,
	}
	if length == 0 {
		return resp, nil // S3 cannot express an empty range
	}
	get, err := st.client.GetObject(ctx, &s3.GetObjectInput{
		Bucket: &st.cfg.Bucket,
		Key:    &key,
		Range:  aws.String(fmt.Sprintf("bytes=%d-%d", req.Offset, req.Offset+length-1)),
		// Objects are never rewritten, but if one were, the bytes must
		// still match the metadata just read.
		IfMatch: head.ETag,
	})
	if err != nil {
		return nil, s3Error(err, "open file")
	}
	if got := aws.ToInt64(get.ContentLength); got != length {
		get.Body.Close()
		return nil, stage.Wrap(stage.CodeInternal, fmt.Errorf("%s: range of %d bytes came back as %d", key, length, got), "open file")
	}
	resp.Body = get.Body
	return resp, nil
}

func notFound() error { return stage.Errorf(stage.CodeNotFound, "file not found") }

// s3Error maps an S3 failure to a stage error: a missing object is a 404,
// anything else a dependency that is down.
func s3Error(err error, msg string) error {
	if isNotFound(err) {
		return notFound()
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return stage.Wrap(stage.CodeUnavailable, err, msg)
}

func isNotFound(err error) bool {
	var noKey *types.NoSuchKey
	var nf *types.NotFound
	if errors.As(err, &noKey) || errors.As(err, &nf) {
		return true
	}
	// HEAD answers carry no error body, so only the status says why.
	var re *awshttp.ResponseError
	return errors.As(err, &re) && re.HTTPStatusCode() == http.StatusNotFound &&
		!strings.Contains(re.Error(), "NoSuchBucket")
}
