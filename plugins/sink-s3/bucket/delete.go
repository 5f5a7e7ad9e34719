package bucket

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mdpress/mdpress/core/fileid"
	"github.com/mdpress/mdpress/sdk/stage"
)

var _ stage.Deleter = (*Sink)(nil)

// Delete removes the object of a file the host stored for a request that
// then failed. S3 answers a delete of a missing key with success, as the
// contract wants.
func (s *Sink) Delete(ctx context.Context, req *stage.DeleteRequest) error {
	// The id is checked before any request: nothing else may become a key.
	if !fileid.Valid(req.ID) {
		return stage.Errorf(stage.CodeInvalid, "invalid file id")
	}
	st := s.cur.Load()
	if st == nil {
		return stage.Errorf(stage.CodeUnavailable, "sink-s3 is not configured")
	}
	key := st.key(req.ID)
	if _, err := st.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &st.cfg.Bucket, Key: &key}); err != nil && !isNotFound(err) {
		return s3Error(err, "delete file")
	}
	return nil
}
