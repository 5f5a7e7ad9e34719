package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mdpress/mdpress/host/version"
)

func newRoot() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "mdpress",
		Short: "Markdown to PDF over a pipeline of plugins",
		Example: `  mdpress serve --dev-account                  # serve the API; the first start prints an API key
  mdpress render notes.md --page-size Letter   # notes.pdf, no server or account needed
  mdpress accounts create --plan pro           # an account and its API key, shown once
  mdpress plugins check                        # start, configure and health-check every plugin`,
		SilenceUsage:  true,
		SilenceErrors: true,
		// A mistyped level or format would otherwise be dropped quietly.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return g.checkLogging(cmd) },
	}
	// --version too, for the habit; `mdpress version --json` for scripts.
	root.Version = version.Get().String()
	root.SetVersionTemplate("{{.Version}}\n")
	g.bind(root)
	root.AddCommand(newServe(g), newAccounts(g), newRender(g), newPlugins(g), newVersion())
	withUsageOnArgs(root)
	return root
}

// withUsageOnArgs makes a wrong number of arguments say what the command
// takes: cobra's "accepts 1 arg(s), received 0" alone, for a bare
// `mdpress render`, named neither the command nor what was missing, and
// SilenceUsage (kept for every other error) hid the usage line.
func withUsageOnArgs(cmd *cobra.Command) {
	for _, c := range cmd.Commands() {
		withUsageOnArgs(c)
	}
	check := cmd.Args
	if check == nil {
		return
	}
	cmd.Args = func(c *cobra.Command, args []string) error {
		if err := check(c, args); err != nil {
			return fmt.Errorf("%w\nusage: %s (examples: %s --help)", err, c.UseLine(), c.CommandPath())
		}
		return nil
	}
}

// group is a command that only holds subcommands. Left to cobra, such a
// command prints its help and exits 0 whatever follows it, so a script's
// mistyped `accounts keys revok KEY_ID` would look like a revocation.
func group(use, short string) *cobra.Command {
	return &cobra.Command{
		Use:   use,
		Short: short,
		Args:  cobra.ArbitraryArgs,
		// Cobra sets this default only on the way to an unknown command of
		// the root; SuggestionsFor needs it here.
		SuggestionsMinimumDistance: 2,
		RunE: func(cmd *cobra.Command, args []string) error {
			if len(args) == 0 {
				return cmd.Help()
			}
			hint := ""
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				hint = "; did you mean " + strings.Join(s, " or ") + "?"
			}
			return fmt.Errorf("unknown command %q for %q%s (see %s --help)", args[0], cmd.CommandPath(), hint, cmd.CommandPath())
		},
	}
}
