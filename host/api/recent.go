package api

import (
	"crypto/sha256"
	"sync"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

// Bounds of the recent-key hints: how long a successful check counts as
// recent, and how many keys are remembered.
const (
	recentTTL  = time.Minute
	maxRecents = 10000
)

// recentKeys remembers, by SHA-256, the keys that authenticated in the last
// minute, so that their next requests can be read and parsed while the key
// is checked again. It is a hint and never a credential: every request is
// authenticated before anything is charged, stored or answered.
type recentKeys struct {
	now func() time.Time
	mu  sync.Mutex
	m   map[[sha256.Size]byte]recentKey
	// forgotten holds when each key was last forgotten: a check that
	// began before may have been answered before the revocation that the
	// forget followed, so its answer is not remembered.
	forgotten map[[sha256.Size]byte]time.Time
}

// recentKey is what the last check said about a key, as far as a request
// needs it before the next check answers.
type recentKey struct {
	until     time.Time
	keyID     string
	userID    string // the key's account, whose share of the queue it takes
	perMin    int64  // the plan's rate limit
	watermark bool   // the plan's watermark
}

func newRecentKeys(now func() time.Time) *recentKeys {
	return &recentKeys{now: now, m: make(map[[sha256.Size]byte]recentKey), forgotten: make(map[[sha256.Size]byte]time.Time)}
}

func (k *recentKeys) get(token string) (recentKey, bool) {
	h := sha256.Sum256([]byte(token))
	k.mu.Lock()
	defer k.mu.Unlock()
	e, ok := k.m[h]
	if !ok || !k.now().Before(e.until) {
		return recentKey{}, false
	}
	return e, true
}

// add remembers a successful check of token that began at began, unless
// the key has been forgotten since: an answer older than a failed check
// must not outlive it.
func (k *recentKeys) add(token string, p stage.Principal, began time.Time) {
	h := sha256.Sum256([]byte(token))
	now := k.now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if t, ok := k.forgotten[h]; ok && !t.Before(began) {
		return
	}
	if len(k.m) >= maxRecents {
		for key, e := range k.m {
			if !now.Before(e.until) {
				delete(k.m, key)
			}
		}
		if len(k.m) >= maxRecents {
			clear(k.m) // all fresh: the hints are only an optimisation
		}
	}
	k.m[h] = recentKey{until: now.Add(recentTTL), keyID: p.KeyID, userID: p.UserID, perMin: p.Plan.RateLimitPerMin, watermark: p.Plan.Watermark}
}

// forget drops token's hint after its check failed, and keeps the time so
// that checks still under way do not bring it back.
func (k *recentKeys) forget(token string) {
	h := sha256.Sum256([]byte(token))
	now := k.now()
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.m, h)
	if len(k.forgotten) >= maxRecents {
		for key, t := range k.forgotten {
			if now.Sub(t) >= recentTTL {
				delete(k.forgotten, key)
			}
		}
		if len(k.forgotten) >= maxRecents {
			clear(k.forgotten) // a flood of bad keys: the hints are only an optimisation
		}
	}
	k.forgotten[h] = now
}
