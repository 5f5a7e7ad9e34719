package main

import (
	"bytes"
	"strings"
	"testing"
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
