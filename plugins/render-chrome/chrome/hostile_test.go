package chrome

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/sdk/stage"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/fetch"
	"github.com/chromedp/cdproto/network"
)

// hostileBody tries every way a document can make the browser fetch
// something: each aims at the private server or at /etc/passwd. One
// stylesheet comes from the public server and is allowed when remote
// resources are.
func hostileBody(n *testNet) string {
	priv := n.private.URL
	port := n.privatePort()
	pub := n.publicURL()
	r := strings.NewReplacer("PRIV", priv, "PORT", port, "PUB", pub)
	return r.Replace(`
<p class="remote">HOSTILE-START</p>
<link rel="stylesheet" href="PUB/ok.css">
<img src="PRIV/img">
<img src="PUB/redirect">
<img src="PUB/chain">
<iframe src="PRIV/frame"></iframe>
<iframe src="file:///etc/passwd"></iframe>
<iframe srcdoc="<img src='PRIV/srcdoc'><iframe src='file:///etc/passwd'></iframe>"></iframe>
<iframe src="data:text/html,<img src='PRIV/dataframe'>"></iframe>
<link rel="stylesheet" href="PRIV/link.css">
<link rel="stylesheet" href="file:///etc/passwd">
<style>
@import url("PRIV/import.css");
@import url("FILE:///etc/passwd");
body { background: url("PRIV/bg.png"); }
@font-face { font-family: evil; src: url("PRIV/font.woff2"), url("file:///usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"); }
.evil { font-family: evil; list-style-image: url("PRIV/bullet.png"); }
</style>
<ul class="evil"><li>font and bullet</li></ul>
<object data="PRIV/object"></object>
<object data="file:///etc/passwd" type="text/plain"></object>
<embed src="PRIV/embed">
<embed src="file:///etc/passwd" type="text/plain">
<video poster="PRIV/poster.png" src="PRIV/video.mp4"></video>
<audio src="PRIV/audio.mp3" autoplay></audio>
<script src="PRIV/script.js"></script>
<script>
  fetch("PRIV/fetch").catch(() => {});
  fetch("file:///etc/passwd").then(r => r.text()).then(t => document.body.append(t)).catch(() => {});
  new Image().src = "PRIV/jsimg";
  try { navigator.sendBeacon("PRIV/beacon", "x"); } catch (e) {}
  try { new WebSocket("ws://127.0.0.1:PORT/ws"); } catch (e) {}
  try { new EventSource("PRIV/events"); } catch (e) {}
  try { const x = new XMLHttpRequest(); x.open("GET", "file:///etc/passwd", false); x.send(); document.body.append(x.responseText); } catch (e) {}
  document.write('<img src="PRIV/written">');
</script>
<meta http-equiv="refresh" content="0; url=PRIV/refresh">
<meta http-equiv="refresh" content="0; url=file:///etc/passwd">
<img src="FiLe:///etc/passwd">
<img src="hTTp://127.0.0.1:PORT/mixed-case">
<img src="http://[::ffff:127.0.0.1]:PORT/mapped">
<img src="http://0x7f000001:PORT/hex">
<img src="http://2130706433:PORT/decimal">
<img src="http://0177.0.0.1:PORT/octal">
<img src="http://127.1:PORT/short">
<img src="http://localhost:PORT/localhost">
<img src="http://[::1]:PORT/v6">
<img src="http://169.254.169.254/latest/meta-data/">
<img srcset="PRIV/srcset 2x">
<picture><source srcset="PRIV/source"><img alt=""></picture>
<svg width="10" height="10"><image href="PRIV/svg-image" width="10" height="10"/></svg>
<input type="image" src="PRIV/input" alt="">
<link rel="preconnect" href="PRIV">
<link rel="dns-prefetch" href="PRIV">
<link rel="prefetch" href="PRIV/prefetch">
<link rel="preload" as="image" href="PRIV/preload">
<link rel="icon" href="PRIV/favicon.ico">
<a href="file:///etc/passwd">a link is not a fetch</a>
<p>HOSTILE-END</p>`)
}

func TestHostileDocumentReachesNothing(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		config      string
		remoteStyle bool // the public stylesheet applies
		bare        bool // loopback bypasses the blackhole proxy
	}{
		{"scripts off, remote allowed", `{"tabs":1,"allowRemote":true}`, true, false},
		{"scripts on, remote allowed", `{"tabs":1,"allowRemote":true,"javascript":true}`, true, false},
		{"scripts on, remote denied", `{"tabs":1,"javascript":true}`, false, false},
		// With loopback let past the blackhole proxy, the Fetch gate alone
		// must stop every request to it. Fetch interception never sees
		// WebSockets or the connections Chromium opens ahead of requests
		// (preconnects): those are what the proxy is for, so this case
		// leaves the WebSocket out and tolerates bare connections.
		{"gate alone, scripts on, remote allowed", `{"tabs":1,"allowRemote":true,"javascript":true}`, true, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			n := newTestNet(t)
			opts := n.options()
			if tt.bare {
				opts = append(opts, func(o *options) { o.bareNetwork = true })
			}
			r := newRenderer(t, tt.config, opts...)
			body := hostileBody(n)
			if tt.bare {
				body = strings.ReplaceAll(body, "new WebSocket(", "String(")
			}
			for range 2 { // the second render runs on a used tab
				res := render(t, r, doc{body: body})
				text := pdfText(t, res.PDF)
				if strings.Contains(text, "root:x:0:0") {
					t.Fatalf("the PDF holds /etc/passwd or the private server's answer:\n%s", text)
				}
				for _, marker := range []string{"HOSTILE-START", "HOSTILE-END"} {
					if !strings.Contains(text, marker) {
						t.Fatalf("%s missing: the document was not printed as given:\n%s", marker, text)
					}
				}
				green := countPixels(t, res.PDF, isGreen)
				if tt.remoteStyle && green == 0 {
					t.Error("the allowed public stylesheet was not applied")
				}
				if !tt.remoteStyle && green != 0 {
					t.Error("a stylesheet loaded though remote resources are off")
				}
			}
			if h := n.privateHits.Load(); h != 0 {
				t.Errorf("the private loopback server got %d requests, want 0", h)
			}
			if c := n.privateConns.Load(); c != 0 && !tt.bare {
				t.Errorf("the private loopback server accepted %d connections, want 0", c)
			}
			if d := n.strayDials.Load(); d != 0 {
				t.Errorf("the fetcher tried to dial %d non-public addresses", d)
			}
			if !tt.remoteStyle && n.publicHits.Load() != 0 {
				t.Errorf("the public server got %d requests with remote resources off", n.publicHits.Load())
			}
			if r.Stats().Blocked == 0 {
				t.Error("nothing counted as blocked")
			}
			t.Logf("stats %+v", r.Stats())
		})
	}
}

func TestScriptsOffByDefault(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, config string
		ran          bool
	}{
		{"default", `{"tabs":1}`, false},
		{"javascript on", `{"tabs":1,"javascript":true}`, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			r := newRenderer(t, tt.config)
			res := render(t, r, doc{body: `<p id="p">STATIC</p><script>document.getElementById("p").textContent = "SCRIPTED"; window.leak = "LEAKED";</script>`})
			text := pdfText(t, res.PDF)
			if got := strings.Contains(text, "SCRIPTED"); got != tt.ran {
				t.Fatalf("script ran = %v, want %v:\n%s", got, tt.ran, text)
			}
			// A later document on the same tab sees none of the earlier
			// one's window.
			res = render(t, r, doc{body: `<p id="q">CLEAN</p><script>document.getElementById("q").textContent = String(window.leak);</script>`})
			if text := pdfText(t, res.PDF); strings.Contains(text, "LEAKED") {
				t.Fatalf("window state leaked between documents:\n%s", text)
			}
			if tt.ran {
				return
			}
			// A sandboxed iframe renders in a process of its own, which a
			// tab's script switch did not reach: its script ran (and could
			// open popups that spun for the browser's life). Its requests
			// would bypass the page's gate and meet the blackhole proxy, so
			// that proxy's count tells whether it ran.
			before := r.Stats().Escaped
			render(t, r, doc{body: `<iframe sandbox="allow-scripts allow-popups" srcdoc="<script>for (var i = 0; i < 20; i++) { new Image().src = 'http://192.0.2.1/' + i + '.png' }</script>"></iframe>`})
			time.Sleep(500 * time.Millisecond)
			// The browser's own background connections at start (five
			// here) may land meanwhile; the script makes twenty.
			if n := r.Stats().Escaped - before; n >= 10 {
				t.Fatalf("a sandboxed iframe's script ran: %d requests reached the blackhole", n)
			}
		})
	}
}

func TestDecide(t *testing.T) {
	const main, sub = cdp.FrameID("main"), cdp.FrameID("sub")
	tests := []struct {
		name        string
		url         string
		typ         network.ResourceType
		frame       cdp.FrameID
		method      string
		allowRemote bool
		want        verdict
	}{
		{"data image", "data:image/png;base64,AA==", network.ResourceTypeImage, main, "GET", false, inline},
		{"DATA upper case", "DATA:text/css,h1{}", network.ResourceTypeStylesheet, main, "GET", false, inline},
		{"file", "file:///etc/passwd", network.ResourceTypeImage, main, "GET", true, deny},
		{"file mixed case", "FiLe:///etc/passwd", network.ResourceTypeStylesheet, main, "GET", true, deny},
		{"http remote off", "http://example.com/a.png", network.ResourceTypeImage, main, "GET", false, deny},
		{"http remote on", "http://example.com/a.png", network.ResourceTypeImage, main, "GET", true, remote},
		{"https remote on", "https://example.com/a.css", network.ResourceTypeStylesheet, main, "GET", true, remote},
		{"HTTP mixed case remote on", "hTTp://example.com/a.png", network.ResourceTypeImage, main, "GET", true, remote},
		{"post remote on", "http://example.com/x", network.ResourceTypeXHR, main, "POST", true, deny},
		{"ftp", "ftp://example.com/x", network.ResourceTypeImage, main, "GET", true, deny},
		{"ws", "ws://example.com/x", network.ResourceTypeWebSocket, main, "GET", true, deny},
		{"blob", "blob:null/1234", network.ResourceTypeImage, main, "GET", true, deny},
		{"chrome", "chrome://settings", network.ResourceTypeImage, main, "GET", true, deny},
		{"navigation", "http://example.com/", network.ResourceTypeDocument, main, "GET", true, abort},
		{"data navigation", "data:text/html,x", network.ResourceTypeDocument, main, "GET", true, abort},
		{"frame", "http://example.com/", network.ResourceTypeDocument, sub, "GET", true, abort},
		{"file frame", "file:///etc/passwd", network.ResourceTypeDocument, sub, "GET", true, abort},
		{"data frame", "data:text/html,x", network.ResourceTypeDocument, sub, "GET", false, inline},
		{"unparsable", "http://[::1", network.ResourceTypeImage, main, "GET", true, deny},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ev := &fetch.EventRequestPaused{
				Request:      &network.Request{URL: tt.url, Method: tt.method},
				ResourceType: tt.typ,
				FrameID:      tt.frame,
			}
			if got := decide(ev, main, tt.allowRemote); got != tt.want {
				t.Fatalf("decide = %v, want %v", got, tt.want)
			}
		})
	}
}

// TestFramesCannotCrashTheBrowser renders a document whose frames crashed
// Chromium's browser process, failing every render in flight with it. The
// crash came on about half of the renders on a new tab, so every render
// here takes a new one, while another tenant renders beside it.
func TestFramesCannotCrashTheBrowser(t *testing.T) {
	t.Parallel()
	r := newRenderer(t, `{"tabs":2,"recycleAfter":1}`)
	size, _ := papers.Lookup("A4")
	try := func(p doc) (*stage.RenderResponse, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		return r.Render(ctx, &stage.RenderRequest{HTML: p.html(), Page: size})
	}
	frames := doc{body: `<p>FRAMES</p>
<iframe src="data:text/html,<p>DATAFRAME</p>"></iframe>
<iframe srcdoc="<p>SRCDOC</p><iframe src='data:text/html,<p>NESTED</p>'></iframe>"></iframe>`}
	done := make(chan struct{})
	stop := sync.OnceFunc(func() { close(done) })
	defer stop()
	bystander := make(chan error, 1)
	go func() {
		defer close(bystander)
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := try(doc{body: "<p>BYSTANDER</p>"}); err != nil {
				bystander <- err
				return
			}
		}
	}()
	var pdfs [][]byte
	for i := range 10 {
		res, err := try(frames)
		if err != nil {
			t.Fatalf("render %d: %v", i, err)
		}
		pdfs = append(pdfs, res.PDF)
	}
	stop()
	if err := <-bystander; err != nil {
		t.Errorf("another tenant's render failed: %v", err)
	}
	if c := r.Stats().Crashes; c != 0 {
		t.Errorf("the browser crashed %d times", c)
	}
	// The srcdoc frame is the document's own markup; the data: frames load
	// nothing and print nothing, not even an error page.
	for i, pdf := range pdfs {
		if got := strings.Fields(pdfText(t, pdf)); !slices.Equal(got, []string{"FRAMES", "SRCDOC"}) {
			t.Fatalf("render %d printed %q, want FRAMES and SRCDOC only", i, got)
		}
	}
}

func TestWithFramePolicy(t *testing.T) {
	tests := []struct{ name, html, want string }{
		{"doctype", "<!DOCTYPE html>\n<html>", "<!DOCTYPE html>" + framePolicy + "\n<html>"},
		{"lower case, space before", " \n<!doctype html><p>", " \n<!doctype html>" + framePolicy + "<p>"},
		{"byte order mark", "\ufeff<!doctype html><p>", "\ufeff<!doctype html>" + framePolicy + "<p>"},
		{"no doctype", "<p>x</p>", framePolicy + "<p>x</p>"},
		{"doctype later", "<p>x</p><!doctype html>", framePolicy + "<p>x</p><!doctype html>"},
		{"unclosed doctype", "<!doctype html", framePolicy + "<!doctype html"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := withFramePolicy(tt.html); got != tt.want {
				t.Fatalf("withFramePolicy(%q) = %q, want %q", tt.html, got, tt.want)
			}
		})
	}
}
