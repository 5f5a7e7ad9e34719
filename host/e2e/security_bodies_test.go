package e2e

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestSecurityHeldBodies sends many full-size bodies at once. The host
// reads and decodes a body before the request takes a place in the
// admission queue, so without a bound on the bodies it holds, its memory
// grew with every client (60 at once: 1.5 GB). Past the bound a client
// gets a clean 429 with Retry-After, not a reset connection, and the host
// stays small.
func TestSecurityHeldBodies(t *testing.T) {
	h := startHost(t, withArgs("--backend", "fpdf"))
	_, key := h.account("pro", 1000)
	const limit = 10 << 20
	// Refused by the parser at once (too complex), so the test measures
	// holding bodies, not rendering them.
	body, _ := json.Marshal(map[string]string{"markdown": strings.Repeat("[", limit-64)})
	// The default bound holds two bodies per conversion slot, and there
	// are two slots per core.
	clients := 4*runtime.NumCPU() + 16

	var mu sync.Mutex
	statuses := map[int]int{}
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range clients {
		wg.Go(func() {
			<-start
			req, _ := http.NewRequest("POST", h.URL+"/v1/pdf/markdown", bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+key)
			req.Header.Set("Content-Type", "application/json")
			resp, err := http.DefaultClient.Do(req)
			status := -1
			if err == nil {
				data, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				status = resp.StatusCode
				if status == http.StatusTooManyRequests && resp.Header.Get("Retry-After") == "" {
					t.Errorf("429 without Retry-After: %s", data)
				}
				if !json.Valid(data) {
					t.Errorf("status %d with a body that is not JSON: %.200s", status, data)
				}
			}
			mu.Lock()
			statuses[status]++
			mu.Unlock()
		})
	}
	var peak int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		for {
			peak = max(peak, rssKB(h.pid()))
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	close(start)
	wg.Wait()
	close(stop)
	<-sampled
	t.Logf("%d clients of %d MiB: statuses %v, host peak RSS %d MiB", clients, len(body)>>20, statuses, peak>>10)
	if statuses[-1] > 0 {
		t.Errorf("%d clients saw a broken connection instead of a response", statuses[-1])
	}
	if statuses[http.StatusTooManyRequests] == 0 {
		t.Errorf("no client was refused: the host held all %d bodies at once", clients)
	}
	for status := range statuses {
		if status != http.StatusTooManyRequests && status != http.StatusRequestEntityTooLarge {
			t.Errorf("status %d, want only 413 (too complex) or 429", status)
		}
	}
	// Two bodies per slot, each read, decoded and copied about five
	// times over, plus the host's own baseline.
	if ceiling := int64(4*runtime.NumCPU())*limit*5/1024 + 200<<10; peak > ceiling {
		t.Errorf("host peaked at %d MiB, over %d MiB", peak>>10, ceiling>>10)
	}
}
