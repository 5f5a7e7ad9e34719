package bucket

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Version is reported in the plugin's Info.
const Version = "0.1.0"

// Sink keeps hosted PDFs in an S3-compatible bucket.
type Sink struct {
	log        *slog.Logger
	now        func() time.Time
	getenv     func(string) string
	httpClient aws.HTTPClient

	mu  sync.Mutex // serialises Configure and Close
	cur atomic.Pointer[state]
}

// state is what one successful Configure set up.
type state struct {
	cfg      Config
	client   *s3.Client
	presign  *s3.PresignClient
	uploader uploader
	expiries *expiryCache
	stop     context.CancelFunc
	done     chan struct{} // closed when the sweeper has returned
	creds    string        // where the keys come from, for Health's message
}

// Option changes a Sink built by New.
type Option func(*Sink)

// WithClock replaces time.Now for expiry decisions, for tests. Presigning
// keeps the real clock: the server checks signatures against its own.
func WithClock(now func() time.Time) Option { return func(s *Sink) { s.now = now } }

// WithGetenv replaces os.Getenv where the sink decides whether the AWS
// environment variables override the config's keys.
func WithGetenv(getenv func(string) string) Option { return func(s *Sink) { s.getenv = getenv } }

// WithHTTPClient sets the HTTP client the S3 client uses. It is used as
// given: settings such as AWS_CA_BUNDLE apply only to the default client.
func WithHTTPClient(c aws.HTTPClient) Option { return func(s *Sink) { s.httpClient = c } }

// New returns an unconfigured Sink. It does no I/O.
func New(log *slog.Logger, opts ...Option) *Sink {
	s := &Sink{log: log, now: time.Now, getenv: os.Getenv}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Configure builds the S3 client, creates the bucket when asked to, and
// starts the sweeper when sweepInterval is set. A second Configure
// replaces the first.
func (s *Sink) Configure(ctx context.Context, req *stage.ConfigureRequest) (*stage.ConfigureResponse, error) {
	cfg, err := parseConfig(req.Config)
	if err != nil {
		return nil, err
	}
	client, creds, err := s.newClient(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if cfg.CreateBucket {
		if err := ensureBucket(ctx, &state{cfg: cfg, client: client, creds: creds}); err != nil {
			return nil, err
		}
	}
	sweepCtx, stop := context.WithCancel(context.WithoutCancel(ctx))
	st := &state{
		cfg:      cfg,
		client:   client,
		presign:  s3.NewPresignClient(client),
		uploader: newUploader(client, cfg.PartSize),
		expiries: newExpiryCache(),
		stop:     stop,
		done:     make(chan struct{}),
		creds:    creds,
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shutdown(s.cur.Swap(st))
	if cfg.SweepInterval > 0 {
		go s.sweepLoop(sweepCtx, st)
	} else {
		close(st.done)
	}
	s.log.Info("sink-s3 configured", "endpoint", cfg.Endpoint, "bucket", cfg.Bucket, "prefix", cfg.Prefix,
		"delivery", cfg.Delivery, "partSize", cfg.PartSize, "sweepInterval", cfg.SweepInterval.String())
	return &stage.ConfigureResponse{Info: stage.Info{Name: "sink-s3", Version: Version}}, nil
}

// newClient returns the S3 client and where its keys come from.
func (s *Sink) newClient(ctx context.Context, cfg Config) (*s3.Client, string, error) {
	opts := []func(*awsconfig.LoadOptions) error{awsconfig.WithRegion(cfg.Region)}
	// Secrets belong in the environment: keys there win over the config's,
	// and the SDK's default chain reads them itself.
	envKeys := s.getenv("AWS_ACCESS_KEY_ID") != "" && s.getenv("AWS_SECRET_ACCESS_KEY") != ""
	creds := credsChain
	if envKeys {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(
			s.getenv("AWS_ACCESS_KEY_ID"), s.getenv("AWS_SECRET_ACCESS_KEY"), s.getenv("AWS_SESSION_TOKEN"))))
		creds = credsEnv
	} else if cfg.AccessKeyID != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(
			cfg.AccessKeyID, cfg.SecretAccessKey, "")))
		creds = credsConfig
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, "", stage.Wrap(stage.CodeInvalid, err, "sink-s3 config: cannot load AWS settings")
	}
	return s3.NewFromConfig(awsCfg, func(o *s3.Options) {
		if cfg.Endpoint != "" {
			o.BaseEndpoint = aws.String(cfg.Endpoint)
			// Other S3 implementations lag behind AWS's newer default
			// checksums; send and check them only where the API requires.
			o.RequestChecksumCalculation = aws.RequestChecksumCalculationWhenRequired
			o.ResponseChecksumValidation = aws.ResponseChecksumValidationWhenRequired
		}
		o.UsePathStyle = cfg.UsePathStyle
		if s.httpClient != nil {
			o.HTTPClient = s.httpClient
		}
	}), creds, nil
}

// ensureBucket creates st's bucket unless it exists; for development
// setups.
func ensureBucket(ctx context.Context, st *state) error {
	if _, err := st.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &st.cfg.Bucket}); err == nil {
		return nil
	}
	in := &s3.CreateBucketInput{Bucket: &st.cfg.Bucket}
	if st.cfg.Region != "us-east-1" {
		in.CreateBucketConfiguration = &types.CreateBucketConfiguration{
			LocationConstraint: types.BucketLocationConstraint(st.cfg.Region),
		}
	}
	_, err := st.client.CreateBucket(ctx, in)
	var owned *types.BucketAlreadyOwnedByYou
	if err != nil && !errors.As(err, &owned) {
		// Only the message crosses the process boundary, so it carries
		// the cause and the setting to change.
		return stage.Wrap(stage.CodeUnavailable, err, st.createProblem(ctx, err))
	}
	return nil
}

// Health checks that the bucket answers with the configured credentials.
// Its message is the line `mdpress serve` exits with when the bucket is
// wrong at start (the cause crosses no process boundary), so it says
// which bucket, where, and what to change (see problem).
func (s *Sink) Health(ctx context.Context) error {
	st := s.cur.Load()
	if st == nil {
		return stage.Errorf(stage.CodeUnavailable, "sink-s3 is not configured")
	}
	if deadline, ok := ctx.Deadline(); ok {
		// Give up with a quarter of the time left, so that the host hears
		// that the bucket does not answer rather than taking sink-s3 for
		// hung and relaunching it while S3 is down.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Until(deadline)*3/4)
		defer cancel()
	}
	if _, err := st.client.HeadBucket(ctx, &s3.HeadBucketInput{Bucket: &st.cfg.Bucket}, oneAttempt); err != nil {
		return stage.Wrap(stage.CodeUnavailable, err, st.problem(ctx, err))
	}
	return nil
}

// Close stops the sweeper. It is safe to call twice and before Configure.
func (s *Sink) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.shutdown(s.cur.Swap(nil))
	return nil
}

func (s *Sink) shutdown(st *state) {
	if st == nil {
		return
	}
	st.stop()
	<-st.done
}

func (st *state) key(id string) string { return st.cfg.Prefix + id + ".pdf" }

var (
	_ stage.Plugin = (*Sink)(nil)
	_ stage.Sink   = (*Sink)(nil)
)
