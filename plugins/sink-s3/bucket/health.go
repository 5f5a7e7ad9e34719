package bucket

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go"
)

// Where the S3 client's keys come from (Sink.newClient).
const (
	credsEnv    = "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY from the environment"
	credsConfig = "plugins.sink-s3.accessKeyID and secretAccessKey"
	credsChain  = "the AWS SDK's default chain (no keys in the environment or the config)"
)

// problem turns a failed HeadBucket into what the operator reads: "bucket
// unavailable" alone left them to find the cause in the plugin's log, and
// the fix (createBucket, the keys) in the source.
func (st *state) problem(ctx context.Context, err error) string {
	where := st.where()
	switch code := st.status(ctx, err); code {
	case 0:
		return st.unanswered(err)
	case http.StatusNotFound:
		return where + " does not exist: create it, or set plugins.sink-s3.createBucket: true to have sink-s3 create it at start"
	case http.StatusForbidden, http.StatusUnauthorized:
		return st.refused()
	default:
		return fmt.Sprintf("%s unavailable: %v", where, err)
	}
}

// createProblem is problem for a CreateBucket that failed at start: the
// keys and an endpoint that does not answer are named as HeadBucket's
// failures are; the server's reason for anything else.
func (st *state) createProblem(ctx context.Context, err error) string {
	switch st.status(ctx, err) {
	case 0:
		return st.unanswered(err)
	case http.StatusForbidden, http.StatusUnauthorized:
		return st.refused()
	default:
		return fmt.Sprintf("sink-s3: cannot create %s: %v", st.where(), err)
	}
}

// status is the HTTP status of the server's answer to a failed call, 0
// when there was none (the keys could not be had, the endpoint not
// reached).
func (st *state) status(ctx context.Context, err error) int {
	var resp *awshttp.ResponseError
	if !errors.As(err, &resp) {
		return 0
	}
	code := resp.HTTPStatusCode()
	if code == 0 {
		return 0 // the SDK's wrapping of a request never sent
	}
	// An answer to HEAD has no body, so no error code: a 404 is a missing
	// bucket on AWS, and an unknown access key on versitygw. A listing's
	// answer says which.
	var api smithy.APIError
	if _, lerr := st.client.ListObjectsV2(ctx, &s3.ListObjectsV2Input{Bucket: &st.cfg.Bucket, MaxKeys: new(int32(1))}, oneAttempt); errors.As(lerr, &api) {
		switch api.ErrorCode() {
		case "NoSuchBucket":
			code = http.StatusNotFound
		case "InvalidAccessKeyId", "SignatureDoesNotMatch", "AccessDenied", "XAdminUserNotFound", "InvalidToken", "ExpiredToken":
			code = http.StatusForbidden
		}
	}
	return code
}

func (st *state) where() string {
	return fmt.Sprintf("bucket %q at %s", st.cfg.Bucket, st.cfg.endpointName())
}

func (st *state) unanswered(err error) string {
	msg := fmt.Sprintf("%s unavailable: %v", st.where(), err)
	switch {
	case st.creds == credsChain:
		msg += "; set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY in mdpress's environment"
	case st.cfg.Endpoint != "":
		// With keys at hand, no answer is the endpoint's.
		msg += "; check plugins.sink-s3.endpoint, and that the server is up"
	}
	return msg
}

func (st *state) refused() string {
	return fmt.Sprintf("%s refused the keys of %s: check them, and that they may read and write the bucket", st.where(), st.creds)
}

// oneAttempt sends a health check's calls once: the SDK's retries of a
// refused connection outlast the host's deadline, and the host checks
// again in a moment anyway.
func oneAttempt(o *s3.Options) { o.RetryMaxAttempts = 1 }

// endpointName is the endpoint as the config says it, or AWS's region.
func (c Config) endpointName() string {
	if c.Endpoint != "" {
		return c.Endpoint
	}
	return "AWS " + c.Region
}
