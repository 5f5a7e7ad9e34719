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
	// forgets counts the hints forgotten: a check that began before one
	// may have been answered before the revocation that the forget
	// followed, so its answer is not remembered. Keys never seen do not
	// count, so that a stream of bad keys does not turn the hints off.
	forgets uint64
}

// recentKey is what the last check said about a key, as far as a request
// needs it before the next check answers.
type recentKey struct {
	until     time.Time
	keyID     string
	perMin    int64 // the plan's rate limit
	watermark bool  // the plan's watermark
}

func newRecentKeys(now func() time.Time) *recentKeys {
	return &recentKeys{now: now, m: make(map[[sha256.Size]byte]recentKey)}
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

// epoch is to be read before a check and passed to add with its answer.
func (k *recentKeys) epoch() uint64 {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.forgets
}

// add remembers a successful check of token that began at epoch, unless a
// key has been forgotten since: the hints are only an optimisation, and an
// answer older than a failed check must not outlive it.
func (k *recentKeys) add(token string, p stage.Principal, epoch uint64) {
	h := sha256.Sum256([]byte(token))
	now := k.now()
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.forgets != epoch {
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
	k.m[h] = recentKey{until: now.Add(recentTTL), keyID: p.KeyID, perMin: p.Plan.RateLimitPerMin, watermark: p.Plan.Watermark}
}

func (k *recentKeys) forget(token string) {
	h := sha256.Sum256([]byte(token))
	k.mu.Lock()
	defer k.mu.Unlock()
	if _, ok := k.m[h]; ok {
		delete(k.m, h)
		k.forgets++
	}
}
