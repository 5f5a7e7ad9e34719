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
	k.add("mdp_a", p)
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
	k.add("mdp_a", p)
	k.forget("mdp_a")
	if _, ok := k.get("mdp_a"); ok {
		t.Fatal("a forgotten key is recent")
	}
	for i := range maxRecents + 5 {
		k.add(fmt.Sprint("mdp_", i), p)
	}
	if n := len(k.m); n > maxRecents {
		t.Fatalf("%d keys remembered, bound %d", n, maxRecents)
	}
}

// has peeks at the bucket: it never takes a request, and says no once
// allow has spent them.
func TestLimiterHas(t *testing.T) {
	now := time.Unix(1_800_000_000, 0)
	l := newLimiter(func() time.Time { return now })
	if !l.has("k", 2) || !l.has("k", 0) {
		t.Fatal("an unused key has no requests left")
	}
	for range 2 {
		if !l.has("k", 2) {
			t.Fatal("has said no with requests left")
		}
		if ok, _ := l.allow("k", 2); !ok {
			t.Fatal("allow refused within the burst")
		}
	}
	if l.has("k", 2) {
		t.Fatal("has said yes with the bucket spent")
	}
	now = now.Add(30 * time.Second)
	if !l.has("k", 2) {
		t.Fatal("no request left after the bucket refilled")
	}
}
