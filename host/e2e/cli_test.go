package e2e

import (
	"bytes"
	"encoding/json"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/internal/pdfcheck"
)

// TestAccountsCommands: the operator commands change what the API reports.
func TestAccountsCommands(t *testing.T) {
	h := startHost(t, fpdf())
	user, key := h.account("free", -1)
	var list []struct {
		UserID  string `json:"userId"`
		Plan    string `json:"plan"`
		Credits int64  `json:"credits"`
	}
	if err := json.Unmarshal(h.mdpress("accounts", "list", "--json"), &list); err != nil || len(list) != 1 || list[0].UserID != user || list[0].Credits != 50 {
		t.Fatalf("accounts list: %+v %v", list, err)
	}
	h.mdpress("accounts", "credit", user, "25")
	h.mdpress("accounts", "set-plan", user, "pro")
	resp, body := h.do("GET", "/v1/user/info", key, nil, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"planName":"pro"`) || !strings.Contains(string(body), `"currentCredits":75`) {
		t.Fatalf("after credit and set-plan: %s", body)
	}
	// A negative N takes away; written plainly it reads as a flag, and the
	// error says how to pass it.
	take := exec.Command(filepath.Join(binDir, "mdpress"), "accounts", "credit", "--data-dir", h.DataDir, user, "-5")
	if out, err := take.CombinedOutput(); err == nil || !strings.Contains(string(out), "credit USER -- -5") {
		t.Fatalf("credit USER -5: %v %s", err, out)
	}
	take = exec.Command(filepath.Join(binDir, "mdpress"), "accounts", "credit", "--data-dir", h.DataDir, user, "--", "-5")
	if out, err := take.CombinedOutput(); err != nil || !strings.Contains(string(out), "now has 70 credits") {
		t.Fatalf("credit USER -- -5: %v %s", err, out)
	}
	var second struct{ KeyID, APIKey string }
	if err := json.Unmarshal(h.mdpress("accounts", "keys", "create", user, "--json"), &second); err != nil || second.APIKey == key {
		t.Fatalf("keys create: %v", err)
	}
	if out := string(h.mdpress("accounts", "keys", "list", user)); strings.Count(out, "key_") != 2 || strings.Contains(out, "mdp_") {
		t.Fatalf("keys list must show two key ids and no key:\n%s", out)
	}
	cmd := exec.Command(filepath.Join(binDir, "mdpress"), "accounts", "create", "--plan", "gold", "--data-dir", h.DataDir)
	if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), "configured plans: free, pro") {
		t.Fatalf("unknown plan: %v %s", err, out)
	}
}

// TestRenderCommand: `mdpress render` turns a local file into a PDF with
// the same plugins, no account and no server.
func TestRenderCommand(t *testing.T) {
	pdfcheck.Require(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "notes.md")
	if err := os.WriteFile(in, []byte("# Notes\n\nLocal rendering works.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "out.pdf")
	cmd := exec.Command(filepath.Join(binDir, "mdpress"), "render", in, "-o", out, "--backend", "fpdf",
		"--page-size", "Legal", "--numbering", "right", "--plugin-dir", filepath.Join(binDir, "plugins"), "--data-dir", dir)
	cmd.Env = cleanEnv()
	summary, err := cmd.Output()
	if err != nil {
		t.Fatalf("render: %v\n%s", err, summary)
	}
	// What a person at a terminal reads: the file, its pages, its size.
	if want := out + ": 1 page, "; !strings.HasPrefix(string(summary), want) {
		t.Errorf("summary %q, want it to start with %q", summary, want)
	}
	pdf, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	info := pdfcheck.Read(t, pdf)
	if math.Abs(info.WidthPt-612) > 1 || math.Abs(info.HeightPt-1008) > 1 || !strings.Contains(pdfcheck.Text(t, pdf), "Local rendering works.") {
		t.Fatalf("render output: %+v", info)
	}
}

// TestRenderPipes: `mdpress render -` reads standard input and writes the
// PDF to standard output, its summary to standard error; the style flags
// take their MDPRESS_* twins when not given, and a flag wins over its twin.
func TestRenderPipes(t *testing.T) {
	pdfcheck.Require(t)
	dir := t.TempDir()
	render := func(args ...string) (pdf []byte, stderr string) {
		t.Helper()
		cmd := exec.Command(filepath.Join(binDir, "mdpress"), append([]string{"render", "-", "--backend", "fpdf",
			"--plugin-dir", filepath.Join(binDir, "plugins"), "--data-dir", dir}, args...)...)
		cmd.Env = append(cleanEnv(), "MDPRESS_PAGE_SIZE=Legal", "MDPRESS_NUMBERING=right")
		cmd.Stdin = strings.NewReader("# Piped\n\nFrom standard input.\n")
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("render %v: %v\n%s", args, err, errOut.String())
		}
		return out, errOut.String()
	}
	pdf, summary := render()
	info := pdfcheck.Read(t, pdf)
	if math.Abs(info.WidthPt-612) > 1 || math.Abs(info.HeightPt-1008) > 1 || !strings.Contains(pdfcheck.Text(t, pdf), "From standard input.") {
		t.Fatalf("piped render with MDPRESS_PAGE_SIZE=Legal: %+v", info)
	}
	// Only the summary: the plugins' start and stop lines are info, and
	// render's default level is warn.
	if !strings.HasPrefix(summary, "standard output: 1 page, ") || strings.Count(summary, "\n") != 1 {
		t.Errorf("summary on standard error %q", summary)
	}
	if _, verbose := render("--log-level", "info"); !strings.Contains(verbose, "msg=\"plugin ready\"") || !strings.Contains(verbose, "\nstandard output: 1 page, ") {
		t.Errorf("--log-level info leaves out the plugins' lines: %q", verbose)
	}
	pdf, _ = render("-o", "-", "--page-size", "A5")
	if info := pdfcheck.Read(t, pdf); math.Abs(info.WidthPt-419.53) > 1 {
		t.Fatalf("--page-size A5 over MDPRESS_PAGE_SIZE=Legal: %+v", info)
	}
}

// TestRenderKeepsTheInput: an output that names the input file (-o
// notes.md, a completion one letter too far; a link to it; a source named
// notes.pdf, which is its own default output) is refused and the Markdown
// kept: the PDF was written over it. So is, before the render, an output
// that cannot be written.
func TestRenderKeepsTheInput(t *testing.T) {
	dir := t.TempDir()
	md := []byte("# Notes\n\nKeep me.\n")
	in, named := filepath.Join(dir, "notes.md"), filepath.Join(dir, "named.pdf")
	for _, p := range []string{in, named} {
		if err := os.WriteFile(p, md, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	link := filepath.Join(dir, "link.pdf")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{in, "-o", in}, {in, "-o", link}, {named}} {
		r := runMdpress(t, nil, append([]string{"render", "--backend", "fpdf", "--plugin-dir", filepath.Join(binDir, "plugins"), "--data-dir", dir}, args...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "is the input file") {
			t.Errorf("render %v: exit %d, want 1 saying the output is the input\n%s", args, r.code, r.stderr)
		}
		for _, p := range []string{in, named} {
			if got, err := os.ReadFile(p); err != nil || !bytes.Equal(got, md) {
				t.Fatalf("render %v: %s now holds %.20q (%v), want the Markdown", args, p, got, err)
			}
		}
	}
	// An output that cannot be written is refused before any plugin
	// starts: it failed once the render (a browser's start, a long
	// document's layout) was done.
	for _, tt := range []struct{ out, want string }{
		{dir, "is a directory: name a file with -o, e.g. -o " + filepath.Join(dir, "notes.pdf")},
		{filepath.Join(dir, "missing", "notes.pdf"), "which does not exist"},
	} {
		r := runMdpress(t, nil, "render", in, "-o", tt.out, "--backend", "fpdf", "--plugin-dir", filepath.Join(binDir, "plugins"), "--data-dir", dir)
		if r.code != 1 || !strings.Contains(r.stderr, tt.want) || strings.Contains(r.stderr, "plugin ready") {
			t.Errorf("render -o %s: exit %d, want 1 saying %q before any plugin starts\n%s", tt.out, r.code, tt.want, r.stderr)
		}
	}
}

// TestRenderByteOrderMark: a file saved with a UTF-8 byte order mark (as
// Windows editors save) renders its first heading as one, on every
// backend: the mark made "# Notes" a paragraph that printed its hash, and
// the PDF had no title.
func TestRenderByteOrderMark(t *testing.T) {
	pdfcheck.Require(t)
	dir := t.TempDir()
	in := filepath.Join(dir, "bom.md")
	if err := os.WriteFile(in, []byte("\ufeff# Notes\n\nSaved by Notepad.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, backend := range backends(t) {
		out := filepath.Join(dir, backend+".pdf")
		r := runMdpress(t, nil, "render", in, "-o", out, "--backend", backend, "--plugin-dir", filepath.Join(binDir, "plugins"), "--data-dir", dir)
		if r.code != 0 {
			t.Fatalf("%s: exit %d\n%s", backend, r.code, r.stderr)
		}
		pdf, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if info, text := pdfcheck.Read(t, pdf), pdfcheck.Text(t, pdf); info.Title != "Notes" || strings.Contains(text, "#") || !strings.Contains(text, "Saved by Notepad.") {
			t.Errorf("%s: title %q, text %q; want the title Notes and no hash", backend, info.Title, text)
		}
	}
}

// TestRenderEnvValueRefused: a style value from the environment that is
// not one is refused with the variable named, where the operator set it.
func TestRenderEnvValueRefused(t *testing.T) {
	for _, env := range []string{"MDPRESS_NUMBERING=bottom", "MDPRESS_THEME=dark", "MDPRESS_PAGE_SIZE=A11"} {
		cmd := exec.Command(filepath.Join(binDir, "mdpress"), "render", "-", "--backend", "fpdf",
			"--plugin-dir", filepath.Join(binDir, "plugins"), "--data-dir", t.TempDir())
		cmd.Env = append(cleanEnv(), env)
		cmd.Stdin = strings.NewReader("# x\n")
		out, err := cmd.CombinedOutput()
		name, value, _ := strings.Cut(env, "=")
		if err == nil || !strings.Contains(string(out), name) || !strings.Contains(string(out), value) {
			t.Errorf("%s: err %v, output %q; want a failure naming %s and %q", env, err, out, name, value)
		}
	}
}

// TestRenderNotUTF8: a file that is not UTF-8 (Latin-1, UTF-16) is refused
// naming the file, where, and what to do. It failed as "parse: internal
// error: rpc error: ... string field contains invalid UTF-8", from the
// plugins' gRPC, which carries UTF-8 only.
func TestRenderNotUTF8(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name string
		md   []byte
		want []string
	}{
		{"latin1.md", []byte("# Notes\n\ncaf\xe9 au lait\n"), []string{"latin1.md is not UTF-8", "line 3, column 4", "iconv -f latin1 -t utf-8"}},
		{"utf16.md", []byte("\xff\xfe#\x00 \x00h\x00i\x00\n\x00"), []string{"utf16.md is UTF-16", "iconv -f utf-16 -t utf-8"}},
	} {
		in := filepath.Join(dir, tt.name)
		if err := os.WriteFile(in, tt.md, 0o600); err != nil {
			t.Fatal(err)
		}
		for _, backend := range backends(t) {
			cmd := exec.Command(filepath.Join(binDir, "mdpress"), "render", in, "--backend", backend,
				"--plugin-dir", filepath.Join(binDir, "plugins"), "--data-dir", dir)
			cmd.Env = cleanEnv()
			out, err := cmd.CombinedOutput()
			if err == nil {
				t.Errorf("%s on %s: rendered, want it refused", tt.name, backend)
			}
			for _, w := range tt.want {
				if !strings.Contains(string(out), w) {
					t.Errorf("%s on %s: output %q, want %q in it", tt.name, backend, out, w)
				}
			}
		}
	}
}

// TestRenderEmptyInput: an empty file or standard input is refused, as
// the API refuses an empty markdown field, and no PDF is written: it was a
// blank page and exit 0, so a failed producer in a pipe went unnoticed.
func TestRenderEmptyInput(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "empty.md")
	if err := os.WriteFile(in, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		arg, want string
	}{
		{in, in + " is empty: nothing to render"},
		{"-", "standard input is empty: nothing to render"},
	} {
		cmd := exec.Command(filepath.Join(binDir, "mdpress"), "render", tt.arg, "--backend", "fpdf",
			"--plugin-dir", filepath.Join(binDir, "plugins"), "--data-dir", dir)
		cmd.Env = cleanEnv()
		cmd.Stdin = strings.NewReader("")
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err == nil {
			t.Errorf("render %s: exit 0, want it refused", tt.arg)
		}
		if !strings.Contains(stderr.String(), tt.want) {
			t.Errorf("render %s: stderr %q, want %q in it", tt.arg, stderr.String(), tt.want)
		}
		if stdout.Len() != 0 {
			t.Errorf("render %s: %d bytes on standard output, want none", tt.arg, stdout.Len())
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "empty.pdf")); !os.IsNotExist(err) {
		t.Errorf("empty.pdf written (stat: %v)", err)
	}
}

// startServe starts serve on a port the system picks, with the backend
// given and a data dir of its own, its log in logs.
func startServe(t *testing.T, backend string) (*exec.Cmd, *syncBuffer) {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "mdpress"), "serve", "--addr", "127.0.0.1:0", "--backend", backend,
		"--plugin-dir", filepath.Join(binDir, "plugins"), "--data-dir", t.TempDir())
	cmd.Env = cleanEnv()
	logs := &syncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	return cmd, logs
}

// TestServeOnPortZero: --addr HOST:0 serves on a port the system picks,
// and the hosted URLs and the log name that port, not 0.
func TestServeOnPortZero(t *testing.T) {
	cmd, logs := startServe(t, "fpdf")
	t.Cleanup(func() { _ = cmd.Process.Signal(syscall.SIGTERM); _ = cmd.Wait() })
	re := regexp.MustCompile(`msg=serving addr=(127\.0\.0\.1:\d+) publicURL=(\S+)`)
	var m []string
	for deadline := time.Now().Add(60 * time.Second); m == nil && time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		m = re.FindStringSubmatch(logs.String())
	}
	if m == nil {
		t.Fatalf("no serving line:\n%s", logs.String())
	}
	if strings.HasSuffix(m[1], ":0") || m[2] != "http://"+m[1] {
		t.Fatalf("serving on %s, public URL %s", m[1], m[2])
	}
	resp, err := http.Get("http://" + m[1] + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}

// TestStopDuringStartup: SIGTERM while the plugins start (Chromium takes
// seconds) stops the host at once with exit 0, as a stop after startup
// does, and leaves no plugin running.
func TestStopDuringStartup(t *testing.T) {
	if !chromiumAvailable() {
		t.Skip("chromium not installed (apt-get install chromium): no startup slow enough to interrupt")
	}
	cmd, logs := startServe(t, "chrome")
	// The quick plugins are up; the browser is still starting.
	for deadline := time.Now().Add(30 * time.Second); !strings.Contains(logs.String(), "msg=\"plugin ready\""); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("no plugin ready:\n%s", logs.String())
		}
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("exit: %v\n%s", err, logs.String())
		}
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatalf("still running 20 s after SIGTERM:\n%s", logs.String())
	}
	if strings.Contains(logs.String(), "plugins ready") {
		t.Skip("the browser was up before the signal: the ordinary shutdown ran")
	}
	if !strings.Contains(logs.String(), "stopped during startup") {
		t.Errorf("no word of the stop:\n%s", logs.String())
	}
	// The plugins that were up have gone with the host.
	for _, m := range regexp.MustCompile(`msg="plugin ready".* pid=(\d+)`).FindAllStringSubmatch(logs.String(), -1) {
		pid, _ := strconv.Atoi(m[1])
		for deadline := time.Now().Add(5 * time.Second); syscall.Kill(pid, 0) == nil; time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("plugin %d outlived the host", pid)
				break
			}
		}
	}
}

// TestLogSettingsChecked: a mistyped log level or format is an error that
// says what is allowed, not a silent default.
func TestLogSettingsChecked(t *testing.T) {
	for _, tt := range []struct {
		args []string
		env  string
		want string
	}{
		{[]string{"--log-level", "verbose"}, "", "want debug, info, warn or error"},
		{nil, "MDPRESS_LOG_LEVEL=verbose", "want debug, info, warn or error"},
		{[]string{"--log-format", "xml"}, "", "want text or json"},
	} {
		cmd := exec.Command(filepath.Join(binDir, "mdpress"), append(tt.args, "plugins", "list", "--plugin-dir", filepath.Join(binDir, "plugins"))...)
		cmd.Env = append(cleanEnv(), tt.env)
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), tt.want) {
			t.Errorf("%v %s: %v %s", tt.args, tt.env, err, out)
		}
	}
}

// TestServePortTaken: serve on an address another process listens on
// exits 1 with a message that names the address and how to choose
// another (the flag, its environment twin, make run's form), where it
// said only "bind: address already in use".
func TestServePortTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	addr := ln.Addr().String()
	for _, tt := range []struct {
		name string
		env  []string
		args []string
	}{
		{"flag", nil, []string{"--addr", addr}},
		{"environment", []string{"MDPRESS_ADDR=" + addr}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"serve", "--backend", "fpdf", "--data-dir", t.TempDir(),
				"--plugin-dir", filepath.Join(binDir, "plugins")}, tt.args...)
			r := runMdpress(t, tt.env, args...)
			if r.code != 1 {
				t.Fatalf("exit %d, want 1:\n%s", r.code, r.stderr)
			}
			for _, w := range []string{addr, "address already in use", "--addr HOST:PORT", "MDPRESS_ADDR=127.0.0.1:8081 make run"} {
				if !strings.Contains(r.stderr, w) {
					t.Errorf("stderr lacks %q:\n%s", w, r.stderr)
				}
			}
		})
	}
}

// TestDevPlanUnknown: a development account on a plan the config lacks
// stops serve with the setting and the plans there are, where it said
// only `unknown plan "gold"`.
func TestDevPlanUnknown(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  []string
		args []string
	}{
		{"flag", nil, []string{"--dev-account", "--dev-plan", "gold"}},
		{"environment", []string{"MDPRESS_DEV_ACCOUNT=true", "MDPRESS_DEV_PLAN=gold"}, nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			args := append([]string{"serve", "--addr", "127.0.0.1:0", "--backend", "fpdf", "--data-dir", t.TempDir(),
				"--plugin-dir", filepath.Join(binDir, "plugins")}, tt.args...)
			r := runMdpress(t, tt.env, args...)
			want := `--dev-plan (MDPRESS_DEV_PLAN): unknown plan "gold" (configured plans: free, pro)`
			if r.code != 1 || !strings.Contains(r.stderr, want) {
				t.Fatalf("exit %d, want 1 and %q:\n%s", r.code, want, r.stderr)
			}
		})
	}
}
