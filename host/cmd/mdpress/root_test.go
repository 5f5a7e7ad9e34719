package main

import (
	"bytes"
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestMistypedSubcommandFails: a subcommand that does not exist is an
// error at every level, with a suggestion, not the parent's help and exit 0.
func TestMistypedSubcommandFails(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		suggest string
	}{
		{[]string{"accounts", "lst"}, "list"},
		{[]string{"accounts", "keys", "revok", "key_x"}, "revoke"},
		{[]string{"plugins", "chek"}, "check"},
		{[]string{"bogus"}, ""},
	} {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(tc.args)
		err := root.Execute()
		if err == nil {
			t.Errorf("%v: no error; output:\n%s", tc.args, out.String())
			continue
		}
		if !strings.Contains(err.Error(), "unknown command") || !strings.Contains(err.Error(), tc.suggest) {
			t.Errorf("%v: %v", tc.args, err)
		}
	}
}

// TestGroupWithoutArgsShowsHelp: the parent alone still lists its commands.
func TestGroupWithoutArgsShowsHelp(t *testing.T) {
	for _, args := range [][]string{{"accounts"}, {"accounts", "keys"}, {"plugins"}} {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if !strings.Contains(out.String(), "Available Commands:") {
			t.Errorf("%v: no command list:\n%s", args, out.String())
		}
	}
}

// TestFlagsNameTheirTwins: the README promises every setting flag an
// environment twin, and --help is where a user looks for it; render's
// --backend read MDPRESS_BACKEND without saying so.
func TestFlagsNameTheirTwins(t *testing.T) {
	twins := map[string]string{
		"config": "MDPRESS_CONFIG", "data-dir": "MDPRESS_DATA_DIR", "plugin-dir": "MDPRESS_PLUGIN_DIR",
		"log-level": "MDPRESS_LOG_LEVEL", "log-format": "MDPRESS_LOG_FORMAT",
		"addr": "MDPRESS_ADDR", "backend": "MDPRESS_BACKEND", "sink": "MDPRESS_SINK", "public-url": "MDPRESS_PUBLIC_URL",
		"dev-account": "MDPRESS_DEV_ACCOUNT", "dev-plan": "MDPRESS_DEV_PLAN", "debug-addr": "MDPRESS_DEBUG_ADDR",
		"theme": "MDPRESS_THEME", "page-size": "MDPRESS_PAGE_SIZE", "numbering": "MDPRESS_NUMBERING",
	}
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		cmd.Flags().VisitAll(func(f *pflag.Flag) {
			if env, ok := twins[f.Name]; ok && !strings.Contains(f.Usage, env) {
				t.Errorf("%s --%s: help %q does not name %s", cmd.CommandPath(), f.Name, f.Usage, env)
			}
		})
		for _, c := range cmd.Commands() {
			walk(c)
		}
	}
	walk(newRoot())
}

// TestVersion: `version` and `--version` print the same build line, and
// --json the object scripts read.
func TestVersion(t *testing.T) {
	run := func(args ...string) string {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetArgs(args)
		if err := root.Execute(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return out.String()
	}
	line := run("version")
	if !strings.HasPrefix(line, "mdpress ") || !strings.Contains(line, "(commit ") || !strings.Contains(line, runtime.Version()) {
		t.Errorf("version: %q", line)
	}
	if got := run("--version"); got != line {
		t.Errorf("--version: %q, version: %q", got, line)
	}
	var info struct{ Version, Revision, Go, Platform string }
	if err := json.Unmarshal([]byte(run("version", "--json")), &info); err != nil || info.Go != runtime.Version() || info.Revision == "" || info.Platform == "" {
		t.Errorf("version --json: %+v, %v", info, err)
	}
}

// TestEveryCommandHasExamples: --help is where an operator starts, and
// no command's said how to call it. Each example must also still be a
// call its command accepts: the path names that command (or, for a
// group, one under it), and the flags and arguments parse.
func TestEveryCommandHasExamples(t *testing.T) {
	root := newRoot()
	var walk func(cmd *cobra.Command)
	walk = func(cmd *cobra.Command) {
		for _, c := range cmd.Commands() {
			walk(c)
		}
		// cobra's own: help, and completion and its shells.
		if cmd.Name() == "help" || cmd.Name() == "completion" || (cmd.HasParent() && cmd.Parent().Name() == "completion") {
			return
		}
		if strings.TrimSpace(cmd.Example) == "" {
			t.Errorf("%s --help shows no example", cmd.CommandPath())
			return
		}
		for _, line := range strings.Split(cmd.Example, "\n") {
			call := line
			if i := strings.Index(call, "#"); i >= 0 {
				call = call[:i]
			}
			if i := strings.LastIndex(call, "|"); i >= 0 {
				call = call[i+1:]
			}
			if i := strings.Index(call, ">"); i >= 0 {
				call = call[:i]
			}
			words := strings.Fields(call)
			if len(words) == 0 || words[0] != "mdpress" {
				t.Errorf("%s: example %q does not call mdpress", cmd.CommandPath(), line)
				continue
			}
			found, rest, err := root.Find(words[1:])
			if err != nil {
				t.Errorf("%s: example %q: %v", cmd.CommandPath(), line, err)
				continue
			}
			if !strings.HasPrefix(found.CommandPath()+" ", cmd.CommandPath()+" ") {
				t.Errorf("%s: example %q calls %s", cmd.CommandPath(), line, found.CommandPath())
				continue
			}
			if err := found.ParseFlags(rest); err != nil {
				t.Errorf("%s: example %q: %v", cmd.CommandPath(), line, err)
				continue
			}
			if found.Args != nil {
				if err := found.Args(found, found.Flags().Args()); err != nil {
					t.Errorf("%s: example %q: %v", cmd.CommandPath(), line, err)
				}
			}
		}
	}
	walk(root)
}

// TestWrongArgCountShowsUsage: a command given too few or too many
// arguments says what it takes and where the examples are.
func TestWrongArgCountShowsUsage(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"render"}, "usage: mdpress render IN.md [flags] (examples: mdpress render --help)"},
		{[]string{"render", "a.md", "b.md"}, "usage: mdpress render IN.md"},
		{[]string{"accounts", "credit", "usr_x"}, "usage: mdpress accounts credit USER N [flags]"},
		{[]string{"accounts", "keys", "revoke"}, "usage: mdpress accounts keys revoke KEY_ID"},
		{[]string{"serve", "8080"}, "usage: mdpress serve [flags]"},
	} {
		root := newRoot()
		var out bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&out)
		root.SetArgs(tc.args)
		err := root.Execute()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: error %v, want %q in it", tc.args, err, tc.want)
		}
	}
}

// TestBoolTwinSaysWhatItWants: MDPRESS_DEV_ACCOUNT=yes is refused saying
// which values a switch takes, not with strconv's parse error.
func TestBoolTwinSaysWhatItWants(t *testing.T) {
	t.Setenv("MDPRESS_DEV_ACCOUNT", "yes")
	root := newRoot()
	var out bytes.Buffer
	root.SetOut(&out)
	root.SetErr(&out)
	root.SetArgs([]string{"serve", "--data-dir", t.TempDir()})
	err := root.Execute()
	if err == nil || !strings.Contains(err.Error(), `MDPRESS_DEV_ACCOUNT="yes"`) || !strings.Contains(err.Error(), "want true or false") ||
		strings.Contains(err.Error(), "strconv") {
		t.Errorf("error %v, want MDPRESS_DEV_ACCOUNT=\"yes\" refused with the values it takes", err)
	}
}
