package api

import (
	"fmt"
	"testing"
	"time"

	"github.com/mdpress/mdpress/sdk/stage"
)

func TestRecentKeys(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	k := newRecentKeys(func() time.Time { return now })
	p := stage.Principal{KeyID: "k1", Plan: stage.Plan{RateLimitPerMin: 60, Watermark: true}}

	if _, ok := k.get("mdp_a"); ok {
		t.Fatal("an unseen key is recent")
	}
	k.add("mdp_a", p, k.epoch())
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
	k.add("mdp_a", p, k.epoch())
	k.forget("mdp_a")
	if _, ok := k.get("mdp_a"); ok {
		t.Fatal("a forgotten key is recent")
	}
	for i := range maxRecents + 5 {
		k.add(fmt.Sprint("mdp_", i), p, k.epoch())
	}
	if n := len(k.m); n > maxRecents {
		t.Fatalf("%d keys remembered, bound %d", n, maxRecents)
	}
}

// TestRecentKeyCheckOlderThanForget: a check that began before a key was
// forgotten (its revocation seen by another request) is not remembered,
// since it may have been answered before the revocation; keys never seen
// do not count as forgotten.
func TestRecentKeyCheckOlderThanForget(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	k := newRecentKeys(func() time.Time { return now })
	p := stage.Principal{KeyID: "k1", Plan: stage.Plan{RateLimitPerMin: 60}}
	k.add("mdp_a", p, k.epoch())

	began := k.epoch()       // a second request's check of mdp_a begins
	k.forget("mdp_a")        // a third request's check has failed meanwhile
	k.add("mdp_a", p, began) // the second check answers with the old word
	if _, ok := k.get("mdp_a"); ok {
		t.Fatal("an answer older than the failed check brought the key back")
	}

	k.add("mdp_a", p, k.epoch())
	began = k.epoch()
	k.forget("mdp_never_seen") // a bad key
	k.add("mdp_b", p, began)
	if _, ok := k.get("mdp_b"); !ok {
		t.Fatal("a bad key's failed check turned the hints off")
	}
}

// TestEarlyHintCountsRequests: the early path takes a request from the
// key's bucket before reading its body, so requests sent at once get it
// only within the plan's limit.
func TestEarlyHintCountsRequests(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	s := &Server{recent: newRecentKeys(func() time.Time { return now }), limiter: newLimiter(func() time.Time { return now })}
	if _, ok := s.earlyHint("mdp_a"); ok {
		t.Fatal("a key never checked took the early path")
	}
	s.recent.add("mdp_a", stage.Principal{KeyID: "k1", Plan: stage.Plan{RateLimitPerMin: 2}}, s.recent.epoch())
	for i := range 2 {
		if h, ok := s.earlyHint("mdp_a"); !ok || h.keyID != "k1" {
			t.Fatalf("request %d within the limit: %+v, %v", i+1, h, ok)
		}
	}
	if _, ok := s.earlyHint("mdp_a"); ok {
		t.Fatal("a request over the limit took the early path")
	}
	if ok, _ := s.limiter.allow("k1", 2); ok {
		t.Fatal("the early requests were not counted in the key's bucket")
	}
	now = now.Add(30 * time.Second)
	if _, ok := s.earlyHint("mdp_a"); !ok {
		t.Fatal("no early path once the bucket refilled")
	}
}
