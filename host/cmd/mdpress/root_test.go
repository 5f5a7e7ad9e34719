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
