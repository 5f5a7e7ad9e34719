package e2e

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestProductionShape runs the deployment of DESIGN section 4: two
// stateless hosts, each with its own data dir, sharing one PostgreSQL and one
// S3-compatible store. A burst of hosted conversions split across both
// charges exactly the balance, and every URL downloads from either host.
func TestProductionShape(t *testing.T) {
	pdfcheck.Require(t)
	pg := newPostgresServer(t).store(t)
	s3opts, _ := s3Sink(t, "proxy")
	opts := append([]hostOpt{fpdf(), pg.env(), withEnv("MDPRESS_PUBLIC_URL=" + deliveryPublicURL)}, s3opts...)
	a := startHost(t, opts...)
	b := startHost(t, opts...)
	_, key := a.account("pro", 20)

	outs := burst([]*host{a, b}, key, 60, func(i int) any {
		return map[string]string{"markdown": "# Burst " + itoa(i), "output": "url"}
	}, nil)
	got := statuses(outs)
	if got[200] != 20 || got[403] != 40 {
		t.Fatalf("statuses %v: want exactly 20 URLs and 40 refusals for 20 credits", got)
	}
	for _, h := range []*host{a, b} {
		if bal := h.balance(key); bal != 0 {
			t.Fatalf("balance on %s: %d, want 0", h.URL, bal)
		}
	}
	served := 0
	for _, o := range outs {
		if o.status != 200 {
			continue
		}
		var body struct{ URL string }
		if err := json.Unmarshal(o.body, &body); err != nil {
			t.Fatal(err)
		}
		// Whichever host made it, the other one serves it too.
		for _, h := range []*host{a, b} {
			resp, pdf := fetch(t, http.MethodGet, onHost(h, body.URL), nil)
			if resp.StatusCode != 200 || !strings.Contains(pdfcheck.Text(t, pdf), "Burst") {
				t.Fatalf("%s from %s: %d", body.URL, h.URL, resp.StatusCode)
			}
		}
		served++
	}
	if served != 20 {
		t.Fatalf("%d URLs served", served)
	}
}
