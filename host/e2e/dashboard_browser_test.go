package e2e

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/mdpress/mdpress/host/config"
)

// browser opens a headless Chromium tab for a visitor of the dashboard.
func browser(t *testing.T) context.Context {
	t.Helper()
	if !chromiumAvailable() {
		t.Skip("chromium not installed (apt-get install chromium): the dashboard's browser tests need it")
	}
	opts := []chromedp.ExecAllocatorOption{}
	if _, err := os.Stat("/usr/lib/chromium/chromium"); err == nil {
		// The /usr/bin wrapper costs a start and prints noise.
		opts = append(opts, chromedp.ExecPath("/usr/lib/chromium/chromium"))
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	t.Cleanup(cancel)
	ctx, cancelTab := chromedp.NewContext(ctx, chromedp.WithAllocatorOptions(opts...))
	t.Cleanup(cancelTab)
	return ctx
}

// js evaluates an expression in the page.
func js[T any](t *testing.T, ctx context.Context, expr string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		t.Fatalf("%s: %v", expr, err)
	}
	return v
}

// waitFor polls expr until it is true; unlike chromedp.Poll it survives
// the page navigating under it.
func waitFor(t *testing.T, ctx context.Context, expr string) {
	t.Helper()
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if ok, err := chromedp.Run(ctx, chromedp.Evaluate[bool](expr)); err == nil && ok {
			return
		}
	}
	t.Fatalf("still not %s", expr)
}

func do(t *testing.T, ctx context.Context, actions ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	if err := chromedp.Do(ctx, actions...); err != nil {
		t.Fatal(err)
	}
}

// TestDashboardBrowserSignupOnce: in a real browser, sign-up shows the key,
// the playground makes a PDF with it, and once the visitor has left the
// page, going back does not show the key again (the back-forward cache
// restored the page with the key in it for the next user of the browser).
func TestDashboardBrowserSignupOnce(t *testing.T) {
	h := startHost(t, fpdf())
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(h.URL+"/"), chromedp.Click(chromedp.ID("signup-btn")), chromedp.WaitVisible(chromedp.ID("signup-out")))
	key := js[string](t, ctx, `document.getElementById("signup-key").textContent`)
	if !strings.HasPrefix(key, "mdp_") || js[string](t, ctx, `document.getElementById("key").value`) != key {
		t.Fatalf("key shown %q, not in the playground", key)
	}
	if resp, body := h.do("GET", "/v1/user/info", key, nil, nil); resp.StatusCode != 200 || !strings.Contains(string(body), `"planName":"free"`) {
		t.Fatalf("shown key: %d %s", resp.StatusCode, body)
	}
	if s := js[string](t, ctx, `JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie + location.href`); strings.Contains(s, key) {
		t.Fatalf("the key is kept in the browser: %s", s)
	}

	// Back after the evaluation has answered: navigating inside it, the
	// page could go before the answer came ("Inspected target navigated
	// or closed", seen on a loaded machine).
	do(t, ctx, chromedp.Navigate(h.URL+"/v1/openapi.json"), chromedp.Evaluate[chromedp.Void](`setTimeout(() => history.back(), 0)`))
	waitFor(t, ctx, `location.pathname === "/" && document.readyState === "complete" && !!document.getElementById("signup-key")`)
	if shown := js[string](t, ctx, `document.getElementById("signup-key").textContent + "|" + document.getElementById("key").value`); strings.Contains(shown, "mdp_") {
		t.Fatalf("back on the dashboard, the key is shown again: %s", shown)
	}

	do(t, ctx, chromedp.SetValue(chromedp.ID("key"), key))
	do(t, ctx, chromedp.Click("#play button[type=submit]"))
	waitFor(t, ctx, `document.getElementById("status").textContent.startsWith("done")`)
	if src := js[string](t, ctx, `document.getElementById("preview").src`); !strings.HasPrefix(src, "blob:") {
		t.Fatalf("preview %q", src)
	}
}

// TestDashboardBrowserSignupOff: with sign-up off (configs/production.yaml)
// the page offers no sign-up button, whose click answered "no such
// endpoint", and says how to get a key; with another plan it names it.
func TestDashboardBrowserSignupOff(t *testing.T) {
	off := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) { c.Dashboard.Signup = false }))
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(off.URL+"/"))
	if n := js[int](t, ctx, `document.querySelectorAll("#signup-btn").length`); n != 0 {
		t.Fatal("sign-up is off, but the page offers it")
	}
	if s := js[string](t, ctx, `document.getElementById("signup").innerText`); !strings.Contains(s, "operator") {
		t.Fatalf("sign-up section: %q", s)
	}

	pro := startHost(t, fpdf(), writeConfig(t, func(c *config.Config) { c.Dashboard.SignupPlan = "pro" }))
	do(t, ctx, chromedp.Navigate(pro.URL+"/"))
	if s := js[string](t, ctx, `document.getElementById("signup").innerText`); !strings.Contains(s, "pro plan") {
		t.Fatalf("sign-up on the pro plan, the page says: %q", s)
	}
}

// TestDashboardBrowserServerGone: a conversion that gets no answer (the
// server went away, or a proxy answered with its own HTML page) is told
// to the visitor, rather than leaving "rendering…" for ever.
func TestDashboardBrowserServerGone(t *testing.T) {
	h := startHost(t, fpdf())
	_, key := h.account("free", -1)
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(h.URL+"/"), chromedp.SetValue(chromedp.ID("key"), key))
	h.stop()
	do(t, ctx, chromedp.Click("#play button[type=submit]"))
	waitFor(t, ctx, `!document.getElementById("play-err").hidden`)
	status := js[string](t, ctx, `document.getElementById("status").textContent + "|" + document.getElementById("play-err").textContent + "|" + document.querySelector("#play button[type=submit]").disabled`)
	if status != "|could not reach the server (Failed to fetch)|false" {
		t.Fatalf("status|error|button disabled: %q", status)
	}
}

// TestDashboardBrowserPreviewPresigned: with sink-s3's default delivery
// (presigned URLs on the bucket's own origin, as configs/production.yaml
// runs) the playground's output=url preview shows the PDF.
func TestDashboardBrowserPreviewPresigned(t *testing.T) {
	opts, bucketURL := s3Sink(t, "presign")
	h := startHost(t, append(opts, fpdf())...)
	_, key := h.account("free", -1)
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(h.URL+"/"), chromedp.SetValue(chromedp.ID("key"), key), chromedp.SetValue(chromedp.ID("output"), "url"),
		chromedp.Evaluate[chromedp.Void](`window.violations = []; document.addEventListener("securitypolicyviolation", e => violations.push(e.violatedDirective + " " + e.blockedURI))`),
		chromedp.Click("#play button[type=submit]"))
	waitFor(t, ctx, `document.getElementById("status").textContent.startsWith("done")`)
	if src := js[string](t, ctx, `document.getElementById("preview").src`); !strings.HasPrefix(src, bucketURL) {
		t.Fatalf("preview %q, want a presigned URL under %s", src, bucketURL)
	}
	time.Sleep(time.Second)
	if v := js[string](t, ctx, `violations.join("; ")`); v != "" {
		t.Fatalf("the preview was blocked: %s", v)
	}
}

// TestDashboardBrowserLang: the playground's language field reaches the
// request, so the PDF it makes claims that language; left blank, it sends
// none (an empty lang is a 400) and the PDF claims none.
func TestDashboardBrowserLang(t *testing.T) {
	if _, err := exec.LookPath("qpdf"); err != nil {
		t.Skip("qpdf not installed")
	}
	h := startHost(t, fpdf())
	_, key := h.account("pro", -1)
	ctx := browser(t)
	do(t, ctx, chromedp.Navigate(h.URL+"/"), chromedp.SetValue(chromedp.ID("key"), key), chromedp.SetValue(chromedp.ID("output"), "url"))
	for _, tt := range []struct{ typed, want string }{{" pt_br ", "pt-BR"}, {"", ""}} {
		do(t, ctx, chromedp.Evaluate[chromedp.Void](fmt.Sprintf(`document.getElementById("lang").value = %q; document.getElementById("status").textContent = ""`, tt.typed)),
			chromedp.Click("#play button[type=submit]"))
		waitFor(t, ctx, `document.getElementById("status").textContent.startsWith("done") || !document.getElementById("play-err").hidden`)
		if msg := js[string](t, ctx, `document.getElementById("play-err").hidden ? "" : document.getElementById("play-err").textContent`); msg != "" {
			t.Fatalf("language %q: %s", tt.typed, msg)
		}
		resp, pdf := rawGet(t, h, strings.TrimPrefix(js[string](t, ctx, `document.getElementById("play-link").href`), h.URL))
		if resp.StatusCode != 200 {
			t.Fatalf("hosted PDF: %d", resp.StatusCode)
		}
		got, _ := pdfCatalog(t, pdf)["/Lang"].(string)
		if got = strings.TrimPrefix(got, "u:"); got != tt.want {
			t.Errorf("language typed %q: /Lang %q, want %q", tt.typed, got, tt.want)
		}
	}
}
