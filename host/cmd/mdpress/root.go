package main

import "github.com/spf13/cobra"

func newRoot() *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:           "mdpress",
		Short:         "Markdown to PDF over a pipeline of plugins",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	g.bind(root)
	root.AddCommand(newServe(g), newAccounts(g), newRender(g), newPlugins(g))
	return root
}
