package bucket

import (
	"context"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"

	"github.com/mdpress/mdpress/core/fileid"
)

// staleUpload is how old an unfinished multipart upload must be before the
// sweeper takes it for the remains of a crash rather than a Store in
// progress.
const staleUpload = 24 * time.Hour

func (s *Sink) sweepLoop(ctx context.Context, st *state) {
	defer close(st.done)
	t := time.NewTicker(st.cfg.SweepInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		n, err := s.sweep(ctx, st)
		if err != nil && ctx.Err() == nil {
			s.log.Warn("sweep hosted files", "err", err, "removed", n)
		} else if n > 0 {
			s.log.Info("swept hosted files", "removed", n)
		}
	}
}

// Sweep deletes expired objects under the prefix and aborts multipart
// uploads a crash left unfinished, and returns how many objects it deleted.
func (s *Sink) Sweep(ctx context.Context) (int, error) {
	st := s.cur.Load()
	if st == nil {
		return 0, errors.New("sink-s3 is not configured")
	}
	return s.sweep(ctx, st)
}

func (s *Sink) sweep(ctx context.Context, st *state) (int, error) {
	now := s.now()
	removed := 0
	seen := map[string]bool{}
	var errs []error
	pages := s3.NewListObjectsV2Paginator(st.client, &s3.ListObjectsV2Input{Bucket: &st.cfg.Bucket, Prefix: &st.cfg.Prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return removed, errors.Join(append(errs, err)...)
		}
		for _, obj := range page.Contents {
			key := aws.ToString(obj.Key)
			if !st.ours(key) {
				continue // not an object this sink wrote: never delete it
			}
			seen[key] = true
			expires, err := s.expiry(ctx, st, key)
			if err != nil {
				if !isNotFound(err) {
					errs = append(errs, err)
				}
				continue
			}
			if now.Before(expires) {
				continue
			}
			if _, err := st.client.DeleteObject(ctx, &s3.DeleteObjectInput{Bucket: &st.cfg.Bucket, Key: &key}); err != nil {
				errs = append(errs, err)
				continue
			}
			removed++
		}
	}
	st.expiries.keepOnly(seen)
	if err := s.abortStale(ctx, st, now); err != nil {
		errs = append(errs, err)
	}
	return removed, errors.Join(errs...)
}

// ours reports whether key has the shape of an object Store writes.
func (st *state) ours(key string) bool {
	name, ok := strings.CutPrefix(key, st.cfg.Prefix)
	if !ok {
		return false
	}
	id, ok := strings.CutSuffix(name, ".pdf")
	return ok && fileid.Valid(id)
}

// expiry returns key's expiry. Objects are never rewritten, so each is
// asked about once and remembered: a sweep then costs the listing plus one
// HEAD per new object.
func (s *Sink) expiry(ctx context.Context, st *state, key string) (time.Time, error) {
	if t, ok := st.expiries.get(key); ok {
		return t, nil
	}
	head, err := st.client.HeadObject(ctx, &s3.HeadObjectInput{Bucket: &st.cfg.Bucket, Key: &key})
	if err != nil {
		return time.Time{}, err
	}
	m, err := decodeMeta(head.Metadata)
	if err != nil {
		return time.Time{}, err
	}
	st.expiries.put(key, m.Expires)
	return m.Expires, nil
}

// abortStale aborts multipart uploads under the prefix older than a day;
// their parts cost storage and are invisible to listings.
func (s *Sink) abortStale(ctx context.Context, st *state, now time.Time) error {
	var errs []error
	pages := s3.NewListMultipartUploadsPaginator(st.client, &s3.ListMultipartUploadsInput{Bucket: &st.cfg.Bucket, Prefix: &st.cfg.Prefix})
	for pages.HasMorePages() {
		page, err := pages.NextPage(ctx)
		if err != nil {
			return errors.Join(append(errs, err)...)
		}
		for _, up := range page.Uploads {
			if !st.ours(aws.ToString(up.Key)) || now.Sub(aws.ToTime(up.Initiated)) < staleUpload {
				continue
			}
			if _, err := st.client.AbortMultipartUpload(ctx, &s3.AbortMultipartUploadInput{
				Bucket: &st.cfg.Bucket, Key: up.Key, UploadId: up.UploadId,
			}); err != nil && !isNotFound(err) {
				errs = append(errs, err)
			} else if err == nil {
				s.log.Info("aborted unfinished upload", "key", aws.ToString(up.Key))
			}
		}
	}
	return errors.Join(errs...)
}

// expiryCache remembers the expiry of objects seen by the sweeper.
type expiryCache struct {
	mu sync.Mutex
	m  map[string]time.Time
}

func newExpiryCache() *expiryCache { return &expiryCache{m: map[string]time.Time{}} }

func (c *expiryCache) get(key string) (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t, ok := c.m[key]
	return t, ok
}

func (c *expiryCache) put(key string, t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.m[key] = t
}

// keepOnly forgets keys a full listing no longer showed.
func (c *expiryCache) keepOnly(seen map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k := range c.m {
		if !seen[k] {
			delete(c.m, k)
		}
	}
}
