//lint:file-ignore SA1019 feature/s3/manager is deprecated in favour of feature/s3/transfermanager, which is still pre-1.0; manager is stable and what the module pins.

package bucket

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/s3/manager"
	"github.com/aws/aws-sdk-go-v2/service/s3"
)

// uploader puts one object, in parts when it is larger than a part.
type uploader interface {
	Upload(ctx context.Context, in *s3.PutObjectInput, opts ...func(*manager.Uploader)) (*manager.UploadOutput, error)
}

func newUploader(client *s3.Client, partSize int64) uploader {
	return manager.NewUploader(client, func(u *manager.Uploader) {
		u.PartSize = partSize
	})
}
