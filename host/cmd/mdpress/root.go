package main

import "github.com/spf13/cobra"

func newRoot() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "mdpress",
		Short:         "Markdown to PDF over a pipeline of plugins",
		SilenceUsage:  true,
		SilenceErrors: true,
		// A mistyped level or format would otherwise be dropped quietly.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return g.checkLogging(cmd) },
	}
	g.bind(root)
	root.AddCommand(newServe(g), newAccounts(g), newRender(g), newPlugins(g))
	return root
}
