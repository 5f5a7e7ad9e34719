package e2e

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/mdpress/mdpress/host/config"
)

// cli is one run of a one-shot mdpress command.
type cli struct {
	stdout, stderr string
	code           int
}

// runMdpress runs mdpress with only the MDPRESS_* variables in env.
func runMdpress(t *testing.T, env []string, args ...string) cli {
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, "mdpress"), args...)
	cmd.Env = append(cleanEnv(), env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("mdpress %v: %v", args, err)
	}
	return cli{stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()}
}

// envOf is the environment hostOpts such as writeConfig set.
func envOf(opts ...hostOpt) []string {
	h := &host{}
	for _, o := range opts {
		o(h)
	}
	return h.env
}

// rows splits a table's lines into fields, header dropped.
func rows(out string) [][]string {
	var rs [][]string
	for i, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if i > 0 {
			rs = append(rs, strings.Fields(l))
		}
	}
	return rs
}

// gone waits for each pid to exit: a command that has returned must leave
// no plugin (nor a browser under it) running.
func gone(t *testing.T, pids []int) {
	t.Helper()
	for _, pid := range pids {
		for deadline := time.Now().Add(20 * time.Second); alive(pid); time.Sleep(50 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Errorf("plugin %d still running after the command exited", pid)
				break
			}
		}
	}
}

// readyPids are the plugins a command's log says it started.
func readyPids(log string) []int {
	var out []int
	for _, m := range regexp.MustCompile(`msg="plugin ready".* pid=(\d+)`).FindAllStringSubmatch(log, -1) {
		pid, _ := strconv.Atoi(m[1])
		out = append(out, pid)
	}
	return out
}

// TestPluginsCheck: `plugins check` starts, configures and health-checks
// every configured plugin and exits 0 with a table of healthy stages, or
// exits 1 with one line naming the plugin and what is wrong (its binary
// missing, a binary serving another stage, its config refused), printing
// no table; either way no plugin is left running. `plugins list` shows
// which stage each binary serves, and a configured one that is missing.
func TestPluginsCheck(t *testing.T) {
	pluginDir := filepath.Join(binDir, "plugins")
	data := t.TempDir()
	want := map[string]string{"auth": "auth-apikey", "meter": "meter-credits", "parse": "parse-goldmark",
		"style": "style-themes", "render": "render-fpdf", "sink": "sink-disk"}
	failed := func(t *testing.T, r cli, msg string) {
		t.Helper()
		if r.code != 1 || r.stdout != "" || !strings.Contains(r.stderr, "mdpress: "+msg) {
			t.Fatalf("exit %d, want 1 with %q on stderr and nothing on stdout\nstdout:\n%s\nstderr:\n%s", r.code, "mdpress: "+msg, r.stdout, tail(r.stderr, 20))
		}
		gone(t, readyPids(r.stderr))
	}

	t.Run("healthy", func(t *testing.T) {
		env := []string{"MDPRESS_BACKEND=fpdf"}
		// serve's --backend, as its environment twin below: only the twin
		// reached plugins check and list.
		r := runMdpress(t, nil, "plugins", "check", "--backend", "fpdf", "--plugin-dir", pluginDir, "--data-dir", data)
		if r.code != 0 || !strings.HasPrefix(r.stdout, "STAGE") {
			t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", r.code, r.stdout, tail(r.stderr, 20))
		}
		seen := map[string]bool{}
		for _, f := range rows(r.stdout) {
			if len(f) < 4 || want[f[0]] != f[1] || f[2] != "true" || f[3] == "" {
				t.Errorf("row %q: want STAGE PLUGIN true VERSION with %v", f, want)
				continue
			}
			seen[f[0]] = true
		}
		if len(seen) != len(want) {
			t.Errorf("stages checked %v, want all of %v:\n%s", seen, want, r.stdout)
		}
		r = runMdpress(t, env, "plugins", "check", "--json", "--plugin-dir", pluginDir, "--data-dir", data)
		var out struct {
			Status []struct {
				Stage, Plugin string
				Healthy       bool
				Pid           int
			}
			// Raw, so that keys are matched exactly: decoding into a
			// struct would fold "Name" into "name".
			Info map[string]map[string]json.RawMessage
		}
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || len(out.Status) != len(want) {
			t.Fatalf("--json: exit %d\n%s", r.code, r.stdout)
		}
		for st, p := range want {
			in := out.Info[st]
			var name string
			var caps []string
			if json.Unmarshal(in["name"], &name) != nil || name != p || len(in["version"]) == 0 ||
				json.Unmarshal(in["capabilities"], &caps) != nil || caps == nil {
				t.Errorf("--json info of %s: %s, want {\"name\": %q, \"version\", \"capabilities\": [...]}", st, in, p)
			}
		}
		var pids []int
		for _, s := range out.Status {
			if want[s.Stage] != s.Plugin || !s.Healthy || s.Pid == 0 {
				t.Errorf("--json status %+v", s)
			}
			pids = append(pids, s.Pid)
		}
		gone(t, pids)

		r = runMdpress(t, env, "plugins", "list", "--plugin-dir", pluginDir, "--data-dir", data)
		if r.code != 0 || !strings.Contains(strings.SplitN(r.stdout, "\n", 2)[0], "("+pluginDir+")") {
			t.Fatalf("list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
		listed := map[string]string{}
		for _, f := range rows(r.stdout) {
			listed[f[0]] = strings.Join(f[1:], " ")
		}
		for _, p := range plugins {
			stage := "-"
			for s, q := range want {
				if q == p {
					stage = s
				}
			}
			if listed[p] != stage {
				t.Errorf("list: %s serves %q, want %q:\n%s", p, listed[p], stage, r.stdout)
			}
		}
		r = runMdpress(t, env, "plugins", "list", "--backend", "chrome", "--sink", "s3", "--plugin-dir", pluginDir, "--data-dir", data)
		listed = map[string]string{}
		for _, f := range rows(r.stdout) {
			listed[f[0]] = strings.Join(f[1:], " ")
		}
		if r.code != 0 || listed["render-chrome"] != "render" || listed["sink-s3"] != "sink" || listed["render-fpdf"] != "-" || listed["sink-disk"] != "-" {
			t.Errorf("list --backend chrome --sink s3: exit %d\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("binary missing", func(t *testing.T) {
		dir := t.TempDir()
		for _, p := range plugins {
			if p != "sink-disk" {
				if err := os.Symlink(filepath.Join(pluginDir, p), filepath.Join(dir, p)); err != nil {
					t.Fatal(err)
				}
			}
		}
		env := []string{"MDPRESS_BACKEND=fpdf"}
		failed(t, runMdpress(t, env, "plugins", "check", "--plugin-dir", dir, "--data-dir", data),
			"plugin sink-disk: not in "+dir+"; its sink plugins: sink-s3")
		// The listing shows the sink stage without its binary, not a
		// table in which the stage is simply absent.
		r := runMdpress(t, env, "plugins", "list", "--plugin-dir", dir, "--data-dir", data)
		if r.code != 0 || !regexp.MustCompile(`(?m)^sink-disk +sink +missing *$`).MatchString(r.stdout) {
			t.Fatalf("list: exit %d, want a row \"sink-disk  sink  missing\":\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	t.Run("binary of another stage", func(t *testing.T) {
		env := []string{"MDPRESS_BACKEND=sink-disk"}
		failed(t, runMdpress(t, env, "plugins", "check", "--plugin-dir", pluginDir, "--data-dir", data),
			"plugin sink-disk (render stage): it serves the sink stage, not render")
		// One binary named for two stages is listed with both, every time.
		r := runMdpress(t, env, "plugins", "list", "--plugin-dir", pluginDir, "--data-dir", data)
		if r.code != 0 || !regexp.MustCompile(`(?m)^sink-disk +render, sink *$`).MatchString(r.stdout) {
			t.Fatalf("list: exit %d, want a row \"sink-disk  render, sink\":\n%s%s", r.code, r.stdout, r.stderr)
		}
	})

	for _, p := range []struct{ plugin, stage string }{{"render-fpdf", "render"}, {"sink-disk", "sink"}} {
		t.Run("unknown key for "+p.plugin, func(t *testing.T) {
			env := append(envOf(writeConfig(t, func(c *config.Config) {
				c.Plugins[p.plugin] = map[string]any{"pageMargin": 10}
			})), "MDPRESS_BACKEND=fpdf")
			r := runMdpress(t, env, "plugins", "check", "--plugin-dir", pluginDir, "--data-dir", data)
			failed(t, r, "plugin "+p.plugin+" ("+p.stage+" stage): configure: ")
			if !strings.Contains(r.stderr, `"pageMargin"`) {
				t.Errorf("the error does not name the key:\n%s", tail(r.stderr, 5))
			}
		})
	}
}

// filesUnder counts the regular files below dir (none when it is absent).
func filesUnder(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			n++
		}
		return err
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	return n
}

// TestDataDirFromEnvironment: without --data-dir, `accounts` and `serve`
// use the data dir MDPRESS_DATA_DIR names (accounts made by one are seen by
// the other, hosted files land in it), and --data-dir wins over it.
func TestDataDirFromEnvironment(t *testing.T) {
	envDir, flagDir := t.TempDir(), t.TempDir()
	env := []string{"MDPRESS_DATA_DIR=" + envDir}
	create := func(args ...string) (user, key string) {
		t.Helper()
		r := runMdpress(t, env, append([]string{"accounts", "create", "--plan", "pro", "--json"}, args...)...)
		var out struct{ UserID, APIKey string }
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &out) != nil || out.APIKey == "" {
			t.Fatalf("accounts create %v: exit %d\n%s%s", args, r.code, r.stdout, r.stderr)
		}
		return out.UserID, out.APIKey
	}
	listed := func(args ...string) string {
		t.Helper()
		r := runMdpress(t, env, append([]string{"accounts", "list", "--json"}, args...)...)
		if r.code != 0 {
			t.Fatalf("accounts list %v: exit %d\n%s", args, r.code, r.stderr)
		}
		return r.stdout
	}
	envUser, envKey := create()
	flagUser, flagKey := create("--data-dir", flagDir)
	for _, dir := range []string{envDir, flagDir} {
		if _, err := os.Stat(filepath.Join(dir, "mdpress.db")); err != nil {
			t.Fatalf("no database in %s: %v", dir, err)
		}
	}
	if l := listed(); !strings.Contains(l, envUser) || strings.Contains(l, flagUser) {
		t.Fatalf("accounts list under MDPRESS_DATA_DIR=%s, want only %s:\n%s", envDir, envUser, l)
	}
	if l := listed("--data-dir", flagDir); !strings.Contains(l, flagUser) || strings.Contains(l, envUser) {
		t.Fatalf("accounts list --data-dir %s, want only %s:\n%s", flagDir, flagUser, l)
	}

	for _, tt := range []struct {
		name            string
		opts            []hostOpt
		dir, other      string
		key, foreignKey string
	}{
		{"environment", []hostOpt{withDataDirEnv(envDir)}, envDir, flagDir, envKey, flagKey},
		{"flag over environment", []hostOpt{withEnv(env...), withDataDir(flagDir)}, flagDir, envDir, flagKey, envKey},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h := startHost(t, append([]hostOpt{fpdf()}, tt.opts...)...)
			if resp, body := h.do("GET", "/v1/user/info", tt.key, nil, nil); resp.StatusCode != 200 {
				t.Fatalf("the key made in %s: %d %s", tt.dir, resp.StatusCode, body)
			}
			if resp, _ := h.do("GET", "/v1/user/info", tt.foreignKey, nil, nil); resp.StatusCode != 401 {
				t.Fatalf("the key made in %s: %d, want 401", tt.other, resp.StatusCode)
			}
			hosted, others := filesUnder(t, filepath.Join(tt.dir, "files")), filesUnder(t, filepath.Join(tt.other, "files"))
			resp, body := h.post(tt.key, map[string]string{"markdown": "# Hosted", "output": "url"})
			if resp.StatusCode != 200 {
				t.Fatalf("output=url: %d %s", resp.StatusCode, body)
			}
			if n := filesUnder(t, filepath.Join(tt.dir, "files")); n <= hosted {
				t.Errorf("no new file under %s/files", tt.dir)
			}
			if n := filesUnder(t, filepath.Join(tt.other, "files")); n != others {
				t.Errorf("a file landed under %s/files", tt.other)
			}
		})
	}
}

// TestAutoBackend: with render.plugin auto (the default), serve renders
// with render-chrome when a Chromium is found and says which, and with
// render-fpdf, warning, when none is: render-chrome's chromePath, when
// set, is the only browser it runs, so a chromePath that does not exist
// is no Chromium even on a machine that has one elsewhere.
func TestAutoBackend(t *testing.T) {
	found := regexp.MustCompile(`msg="rendering with render-chrome" chromium=(\S+)`)
	// ready is the render plugin the "plugins ready" line names. The log
	// is copied from a pipe, so it may reach the buffer after /readyz
	// answered; the lines before it have arrived once it has.
	ready := func(t *testing.T, h *host) string {
		t.Helper()
		re := regexp.MustCompile(`msg="plugins ready".* render=(\S+)`)
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if m := re.FindStringSubmatch(h.logs.String()); m != nil {
				return m[1]
			}
		}
		t.Fatalf("no plugins ready line:\n%s", h.logs.String())
		return ""
	}
	chromePath := func(p string) hostOpt {
		return writeConfig(t, func(c *config.Config) { c.Plugins["render-chrome"] = map[string]any{"chromePath": p} })
	}
	converts := func(t *testing.T, h *host) {
		t.Helper()
		_, key := h.account("pro", 1)
		if resp, body := h.post(key, map[string]string{"markdown": "# Auto"}); resp.StatusCode != 200 || !bytes.HasPrefix(body, []byte("%PDF-")) {
			t.Fatalf("conversion: %d %.200s", resp.StatusCode, body)
		}
	}

	t.Run("chromePath does not exist", func(t *testing.T) {
		missing := filepath.Join(t.TempDir(), "chromium")
		h := startHost(t, chromePath(missing))
		if r := ready(t, h); r != "render-fpdf" {
			t.Fatalf("renders with %s, want render-fpdf", r)
		}
		if !strings.Contains(h.logs.String(), "level=WARN msg=\"render-chrome's chromePath does not exist: rendering with render-fpdf") ||
			!strings.Contains(h.logs.String(), "chromePath="+missing) {
			t.Errorf("no warning naming the chromePath:\n%s", h.logs.String())
		}
		converts(t, h)
	})

	var chromium string
	t.Run("Chromium found", func(t *testing.T) {
		if !chromiumAvailable() {
			t.Skip("chromium not installed (apt-get install chromium): auto cannot find one")
		}
		h := startHost(t)
		if r := ready(t, h); r != "render-chrome" {
			t.Fatalf("renders with %s, want render-chrome", r)
		}
		m := found.FindStringSubmatch(h.logs.String())
		if m == nil {
			t.Fatalf("no \"rendering with render-chrome\" line:\n%s", h.logs.String())
		}
		chromium = m[1]
	})

	t.Run("chromePath exists", func(t *testing.T) {
		if chromium == "" {
			t.Skip("no Chromium found above to point chromePath at")
		}
		link := filepath.Join(t.TempDir(), "my-chromium")
		if err := os.Symlink(chromium, link); err != nil {
			t.Fatal(err)
		}
		h := startHost(t, chromePath(link))
		if r := ready(t, h); r != "render-chrome" {
			t.Fatalf("renders with %s, want render-chrome", r)
		}
		if m := found.FindStringSubmatch(h.logs.String()); m == nil || m[1] != link {
			t.Fatalf("want \"rendering with render-chrome\" chromium=%s:\n%s", link, h.logs.String())
		}
	})

	t.Run("no Chromium", func(t *testing.T) {
		// The binaries are not changed: serve runs in a mount namespace of
		// its own, where Debian's Chromium directory is empty and PATH
		// names no directory.
		hide := []string{"unshare", "-rm", "sh", "-c",
			`if [ -d /usr/lib/chromium ]; then mount -t tmpfs none /usr/lib/chromium || exit 1; fi; PATH=/nonexistent exec "$@"`, "sh"}
		if out, err := exec.Command(hide[0], append(hide[1:], filepath.Join(binDir, "mdpress"), "help")...).CombinedOutput(); err != nil {
			t.Skipf("no user and mount namespace to hide the installed Chromium in (%v: %s)", err, out)
		}
		h := startHost(t, withWrap(hide...))
		if r := ready(t, h); r != "render-fpdf" {
			t.Fatalf("renders with %s, want render-fpdf", r)
		}
		if !strings.Contains(h.logs.String(), `level=WARN msg="no Chromium found: rendering with render-fpdf`) {
			t.Errorf("no warning:\n%s", h.logs.String())
		}
		converts(t, h)
	})
}

// TestProductionConfigWithoutDatabase: configs/production.yaml on a
// machine without its database's DSN renders locally and lists plugins,
// which never open the account store, and the commands that open it
// refuse with the setting to give. render used to refuse too, for a DSN
// it does not use ("accounts and render read the same config").
func TestProductionConfigWithoutDatabase(t *testing.T) {
	prod, err := filepath.Abs(filepath.Join("..", "..", "configs", "production.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	md := filepath.Join(dir, "in.md")
	if err := os.WriteFile(md, []byte("# Local\n\nwith the production config\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	common := []string{"--config", prod, "--data-dir", dir, "--plugin-dir", filepath.Join(binDir, "plugins")}
	out := filepath.Join(dir, "out.pdf")
	if r := runMdpress(t, nil, append([]string{"render", md, "-o", out, "--backend", "fpdf"}, common...)...); r.code != 0 {
		t.Fatalf("render: exit %d\n%s", r.code, r.stderr)
	}
	if b, err := os.ReadFile(out); err != nil || !bytes.HasPrefix(b, []byte("%PDF-")) {
		t.Fatalf("render wrote no PDF: %v", err)
	}
	if r := runMdpress(t, nil, append([]string{"plugins", "list"}, common...)...); r.code != 0 || !strings.Contains(r.stdout, "sink-s3") {
		t.Fatalf("plugins list: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	for _, args := range [][]string{{"accounts", "list"}, {"plugins", "check"}, {"serve", "--addr", "127.0.0.1:0"}} {
		r := runMdpress(t, nil, append(args, common...)...)
		if r.code != 1 || !strings.Contains(r.stderr, "accounts.dsn is required for postgres (set MDPRESS_ACCOUNTS_DSN)") {
			t.Errorf("%v: exit %d, want 1 naming MDPRESS_ACCOUNTS_DSN:\n%s", args, r.code, r.stderr)
		}
	}
}

// TestServeLogsWhereAccountsLive: serve's "plugins ready" line names where
// the accounts are, the SQLite file or PostgreSQL's user, address and
// database without the DSN's password, where it said only the driver: an
// MDPRESS_ACCOUNTS_DSN left in the environment, or a data dir other than
// the one meant, showed nowhere until keys were refused.
func TestServeLogsWhereAccountsLive(t *testing.T) {
	pg := newPostgresServer(t)
	accountsLine := regexp.MustCompile(`msg="plugins ready".* accounts=("[^"]*"|\S+)`)
	where := func(t *testing.T, h *host) string {
		t.Helper()
		var m []string
		for deadline := time.Now().Add(5 * time.Second); m == nil && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			m = accountsLine.FindStringSubmatch(h.logs.String())
		}
		if m == nil {
			t.Fatalf("no plugins ready line naming the accounts:\n%s", h.logs.String())
		}
		return strings.Trim(m[1], `"`)
	}
	t.Run("sqlite", func(t *testing.T) {
		h := startHost(t, fpdf())
		if got, want := where(t, h), filepath.Join(h.DataDir, "mdpress.db"); got != want {
			t.Errorf("accounts=%s, want %s", got, want)
		}
	})
	t.Run("postgres", func(t *testing.T) {
		st := pg.store(t)
		dsn := strings.Replace(st.dsn, "postgres://postgres@", "postgres://postgres:hunter2@", 1)
		if dsn == st.dsn {
			t.Fatalf("DSN %s: no user to give a password", st.dsn)
		}
		u, err := url.Parse(st.dsn)
		if err != nil {
			t.Fatal(err)
		}
		h := startHost(t, fpdf(), withEnv("MDPRESS_ACCOUNTS_DRIVER=postgres", "MDPRESS_ACCOUNTS_DSN="+dsn))
		got := where(t, h)
		if want := "postgres postgres@" + u.Host + u.Path; got != want {
			t.Errorf("accounts=%s, want %s", got, want)
		}
		if strings.Contains(h.logs.String(), "hunter2") {
			t.Errorf("the DSN's password is in the log")
		}
	})
}

// TestAccountsNeedTheirDatabase: an accounts command pointed at a data dir
// without a database (run from another directory than serve, whose data
// dir is relative to it, or with a mistyped --data-dir) says so and leaves
// nothing behind; it made an empty database of its own there, where list
// showed no account and a credit "not found". accounts create may start
// one, and says where.
func TestAccountsNeedTheirDatabase(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "typo")
	for _, args := range [][]string{{"accounts", "list"}, {"accounts", "credit", "usr_x", "5"}, {"accounts", "keys", "list", "usr_x"}} {
		r := runMdpress(t, nil, append(args, "--data-dir", dir)...)
		if r.code != 1 || !strings.Contains(r.stderr, "no account database at "+filepath.Join(dir, "mdpress.db")) || r.stdout != "" {
			t.Errorf("%v: exit %d, want 1 naming the missing database\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
		}
		if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("%v made %s: %v", args, dir, err)
		}
	}
	r := runMdpress(t, nil, "accounts", "create", "--json", "--data-dir", dir)
	if r.code != 0 || !strings.Contains(r.stderr, "new account database at "+filepath.Join(dir, "mdpress.db")) {
		t.Fatalf("accounts create: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
	var made struct{ UserID string }
	if err := json.Unmarshal([]byte(r.stdout), &made); err != nil || made.UserID == "" {
		t.Fatalf("accounts create --json: %v %q", err, r.stdout)
	}
	if r := runMdpress(t, nil, "accounts", "list", "--data-dir", dir); r.code != 0 || !strings.Contains(r.stdout, made.UserID) || r.stderr != "" {
		t.Fatalf("accounts list after create: exit %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

// TestAccountsPostgresURLWithoutDriver: a PostgreSQL URL given as the DSN
// without accounts.driver is refused, by every accounts command, as the
// URL it is, its password left out. The check for a missing database took
// it for a data dir's file: list was told to name the data dir, with the
// password in the path it printed, and create announced a new database
// at ./postgres:/... before it failed.
func TestAccountsPostgresURLWithoutDriver(t *testing.T) {
	dir := t.TempDir()
	env := []string{config.Env.AccountsDSN + "=postgres://mdpress:hunter2@db.invalid:5432/mdpress?sslmode=disable"}
	for _, args := range [][]string{{"accounts", "list"}, {"accounts", "create", "--plan", "pro"}} {
		r := runMdpress(t, env, append(args, "--data-dir", dir)...)
		if r.code != 1 || !strings.Contains(r.stderr, "is a URL, not a file path; a PostgreSQL DSN needs accounts.driver: postgres") {
			t.Errorf("%v: exit %d, want 1 saying the DSN is a URL\nstdout: %s\nstderr: %s", args, r.code, r.stdout, r.stderr)
		}
		if strings.Contains(r.stderr, "hunter2") || strings.Contains(r.stderr, "new account database") || strings.Contains(r.stderr, "--data-dir") {
			t.Errorf("%v: misleading or leaking:\n%s", args, r.stderr)
		}
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("the data dir holds %v", ents)
	}
}

// TestServeNamesTheAccountsDatabaseItCannotOpen: serve (and accounts)
// against a PostgreSQL that refuses the DSN exits with the database, the
// server's reason and the setting to fix, and never with the DSN's
// password. The exit line said only "cannot open the account store",
// the reason being in a plugin's log line above it; and a keyword/value
// DSN with spaces around "=" (password = ..., as libpq allows) that pgx
// could not read went into that log line and the accounts error whole,
// password included, and so did the word of an unquoted password that
// pgx quotes as where it stopped.
func TestServeNamesTheAccountsDatabaseItCannotOpen(t *testing.T) {
	st := newPostgresServer(t).store(t)
	u, err := url.Parse(st.dsn)
	if err != nil {
		t.Fatal(err)
	}
	missing := "mdpress_missing"
	cases := []struct {
		name, dsn string
		want      []string
	}{
		{"database refused", "postgres://postgres:hunter2@" + u.Host + "/" + missing + "?sslmode=disable",
			[]string{"cannot open the accounts at postgres postgres@" + u.Host + "/" + missing,
				`database "` + missing + `" does not exist`, "check accounts.dsn (MDPRESS_ACCOUNTS_DSN)"}},
		{"DSN unreadable", "host=" + u.Hostname() + " port=" + u.Port() + " user=postgres password = hunter2 dbname=mdpress connect_timeout=soon",
			[]string{"accounts.dsn (MDPRESS_ACCOUNTS_DSN) is not a PostgreSQL DSN: invalid connect_timeout"}},
		// A password with a space or an "&" in it, not quoted or
		// percent-encoded: pgx quotes the word it stopped at, which it
		// cannot know for part of the password.
		{"password word unquoted", "host=" + u.Hostname() + " port=" + u.Port() + " user=postgres password=correct hunter2 dbname=mdpress",
			[]string{"accounts.dsn (MDPRESS_ACCOUNTS_DSN) is not a PostgreSQL DSN: failed to parse as keyword/value (missing \"=\" after \"...\""}},
		{"password ampersand unencoded", "postgres://postgres@" + u.Host + "/mdpress?password=correct&hunter2&sslmode=disable",
			[]string{"accounts.dsn (MDPRESS_ACCOUNTS_DSN) is not a PostgreSQL DSN: failed to parse as URL (missing key/value separator \"=\" in URI query parameter: \"...\")"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			env := []string{"MDPRESS_ACCOUNTS_DRIVER=postgres", "MDPRESS_ACCOUNTS_DSN=" + c.dsn}
			common := []string{"--data-dir", t.TempDir(), "--plugin-dir", filepath.Join(binDir, "plugins")}
			for _, args := range [][]string{{"serve", "--addr", "127.0.0.1:0", "--backend", "fpdf"}, {"accounts", "list"}} {
				r := runMdpress(t, env, append(args, common...)...)
				lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
				last := lines[len(lines)-1]
				for _, w := range c.want {
					if r.code != 1 || !strings.Contains(last, w) {
						t.Errorf("%v: exit %d, want 1 and a last line with %q:\n%s", args, r.code, w, r.stderr)
					}
				}
				if strings.Contains(r.stderr, "hunter2") {
					t.Errorf("%v: the DSN's password is on stderr:\n%s", args, r.stderr)
				}
			}
		})
	}
}
