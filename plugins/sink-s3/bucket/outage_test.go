package bucket

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/plugintest/s3test"
	"github.com/mdpress/mdpress/sdk/stage"
)

// TestHealthAnswersInTimeWhileS3IsDown: with the S3 server gone, health
// answers within its caller's deadline that the bucket is unavailable and
// why. The SDK's retries of a refused connection ran past the host's 2 s
// health deadline, so the host heard no answer, took sink-s3 for hung and
// relaunched it every three checks for as long as S3 was down (into a
// Configure that, with createBucket, failed the same way and backed off),
// where a dependency that is down is to be waited out.
func TestHealthAnswersInTimeWhileS3IsDown(t *testing.T) {
	srv, err := s3test.Launch(t.TempDir())
	if err != nil {
		t.Skipf("no S3 server: %v", err)
	}
	defer srv.Close()
	s := configure(t, map[string]any{
		"endpoint": srv.Endpoint, "region": s3test.Region, "bucket": s3test.Bucket(t), "usePathStyle": true,
		"accessKeyID": srv.AccessKey, "secretAccessKey": srv.SecretKey, "createBucket": true,
	})
	if err := s.Health(context.Background()); err != nil {
		t.Fatalf("health with S3 up: %v", err)
	}
	srv.Close()
	for range 3 {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		start := time.Now()
		err := s.Health(ctx)
		took, late := time.Since(start), ctx.Err()
		cancel()
		wantCode(t, err, stage.CodeUnavailable)
		if late != nil {
			t.Fatalf("health took %v, past its 2s deadline: %v", took, err)
		}
		if msg := stage.SafeMessage(err); !strings.Contains(msg, srv.Endpoint) || !strings.Contains(msg, "connection refused") {
			t.Errorf("health message %q: want the endpoint and the reason", msg)
		}
	}
}
