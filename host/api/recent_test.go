package api

import (
	"fmt"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/mdpress/mdpress/sdk/stage"
)

func TestRecentKeys(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	k := newRecentKeys(func() time.Time { return now })
	p := stage.Principal{KeyID: "k1", Plan: stage.Plan{RateLimitPerMin: 60, Watermark: true}}

	if _, ok := k.get("mdp_a"); ok {
		t.Fatal("an unseen key is recent")
	}
	k.add("mdp_a", p, now)
	if e, ok := k.get("mdp_a"); !ok || e.keyID != "k1" || e.perMin != 60 || !e.watermark {
		t.Fatalf("get = %+v, %v", e, ok)
	}
	if _, ok := k.get("mdp_b"); ok {
		t.Fatal("another key is recent")
	}
	now = now.Add(recentTTL)
	if _, ok := k.get("mdp_a"); ok {
		t.Fatal("a key checked a minute ago is still recent")
	}
	k.add("mdp_a", p, now)
	k.forget("mdp_a")
	if _, ok := k.get("mdp_a"); ok {
		t.Fatal("a forgotten key is recent")
	}
	for i := range maxRecents + 5 {
		k.add(fmt.Sprint("mdp_", i), p, now)
	}
	if n := len(k.m); n > maxRecents {
		t.Fatalf("%d keys remembered, bound %d", n, maxRecents)
	}
}

// TestRecentKeyCheckOlderThanForget: a check that began before a key was
// forgotten (its revocation seen by another request) is not remembered,
// since it may have been answered before the revocation, whether or not the
// key was a hint then; other keys are not affected, and the forgotten
// times stay bounded.
func TestRecentKeyCheckOlderThanForget(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	k := newRecentKeys(func() time.Time { return now })
	p := stage.Principal{KeyID: "k1", Plan: stage.Plan{RateLimitPerMin: 60}}
	for _, recent := range []bool{true, false} {
		if recent {
			k.add("mdp_a", p, now)
		}
		began := now // a request's check of mdp_a begins
		now = now.Add(time.Millisecond)
		k.forget("mdp_a") // another request's check has failed meanwhile
		now = now.Add(time.Millisecond)
		k.add("mdp_a", p, began) // the first check answers, from before the revocation
		if _, ok := k.get("mdp_a"); ok {
			t.Fatalf("recent=%v: an answer older than the failed check brought the key back", recent)
		}
	}
	k.add("mdp_a", p, now) // a check that began after the forget
	if _, ok := k.get("mdp_a"); !ok {
		t.Fatal("a check begun after the forget is not remembered")
	}
	began := now
	k.forget("mdp_never_seen")
	k.add("mdp_b", p, began)
	if _, ok := k.get("mdp_b"); !ok {
		t.Fatal("another key's failed check dropped this one's answer")
	}
	for i := range maxRecents + 5 {
		k.forget(fmt.Sprint("mdp_bad_", i))
	}
	if n := len(k.forgotten); n > maxRecents {
		t.Fatalf("%d forgotten keys kept, bound %d", n, maxRecents)
	}
}

// TestEarlyHintCountsRequests: the early path takes a request from the
// key's bucket before reading its body, so requests sent at once get it
// only within the plan's limit.
func TestEarlyHintCountsRequests(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := &Server{recent: newRecentKeys(func() time.Time { return now }), limiter: newLimiter(func() time.Time { return now })}
	if _, _, ok := s.earlyHint("mdp_a"); ok {
		t.Fatal("a key never checked took the early path")
	}
	s.recent.add("mdp_a", stage.Principal{KeyID: "k1", Plan: stage.Plan{RateLimitPerMin: 2}}, now)
	for i := range 2 {
		if h, counted, ok := s.earlyHint("mdp_a"); !ok || h.keyID != "k1" || counted != 2 {
			t.Fatalf("request %d within the limit: %+v, %d, %v", i+1, h, counted, ok)
		}
	}
	if _, _, ok := s.earlyHint("mdp_a"); ok {
		t.Fatal("a request over the limit took the early path")
	}
	if ok, _ := s.limiter.allow("k1", 2); ok {
		t.Fatal("the early requests were not counted in the key's bucket")
	}
	now = now.Add(30 * time.Second)
	if _, _, ok := s.earlyHint("mdp_a"); !ok {
		t.Fatal("no early path once the bucket refilled")
	}
}

// TestEarlyHintAfterPlanChange: requests whose hint still has the old plan
// take from the bucket the new plan made, as it stands, and do not refill
// it by making one for the old limit: a lowered limit holds for requests
// sent at once.
func TestEarlyHintAfterPlanChange(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := &Server{recent: newRecentKeys(func() time.Time { return now }), limiter: newLimiter(func() time.Time { return now })}
	s.recent.add("mdp_a", stage.Principal{KeyID: "k1", Plan: stage.Plan{RateLimitPerMin: 600}}, now)
	if _, counted, ok := s.earlyHint("mdp_a"); !ok || counted != 600 {
		t.Fatalf("first request: counted %d, %v", counted, ok)
	}
	// Its check says the plan is now 2 a minute: the handler applies it.
	if ok, _ := s.limiter.allow("k1", 2); !ok {
		t.Fatal("the new plan's first request refused")
	}
	allowed := 0
	for range 50 {
		_, counted, ok := s.earlyHint("mdp_a") // the hint still says 600
		if !ok {
			continue
		}
		if counted != 2 {
			t.Fatalf("counted at %d, the bucket is the new plan's", counted)
		}
		allowed++
	}
	if allowed != 1 {
		t.Fatalf("%d of 50 requests with the old hint went early, want the 1 left in the new plan's bucket", allowed)
	}
}

// TestLimiterKeepsRefillingBuckets: a bucket left alone is dropped only
// once it is full again; dropping it earlier handed back its whole burst
// (sign-ups: 5 an hour became 30 for a client waiting 10 minutes between
// bursts).
func TestLimiterKeepsRefillingBuckets(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := newLimiter(func() time.Time { return now })
	every := rate.Every(12 * time.Minute)
	for range 5 {
		if ok, _ := l.allowRate("signup:192.0.2.1", every, 5); !ok {
			t.Fatal("refused within the burst")
		}
	}
	now = now.Add(10*time.Minute + time.Second)
	l.allowRate("other", every, 5) // a sweep runs
	if ok, _ := l.allowRate("signup:192.0.2.1", every, 5); ok {
		t.Fatal("a bucket 10 minutes into refilling was full again")
	}
	now = now.Add(time.Hour)
	l.allowRate("other", every, 5)
	if _, kept := l.buckets["signup:192.0.2.1"]; kept {
		t.Fatal("a full bucket left alone was kept")
	}
}
