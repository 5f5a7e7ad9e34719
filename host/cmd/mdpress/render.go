package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/core/pipeline"
	"github.com/mdpress/mdpress/core/request"
	"github.com/mdpress/mdpress/host/supervisor"
	"github.com/mdpress/mdpress/sdk/stage"
)

func newRender(g *globals) *cobra.Command {
	var out, theme, pageSize, numbering, backend string
	cmd := &cobra.Command{
		Use:   "render IN.md",
		Short: "Render a local Markdown file to PDF through the parse, style and render plugins (no account, no credits)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			log := g.logger(cmd)
			c, err := g.load(cmd)
			if err != nil {
				return err
			}
			if cmd.Flags().Changed("backend") {
				c.SetBackend(backend)
			}
			resolveRender(c, log)
			md, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			page, ok := papers.LookupFold(pageSize)
			if !ok {
				return fmt.Errorf("--page-size %q: want one of %s", pageSize, strings.Join(papers.Names(), ", "))
			}
			if !contains(request.Themes, theme) {
				return fmt.Errorf("--theme %q: want one of %s", theme, strings.Join(request.Themes, ", "))
			}
			if !contains(request.Numberings, numbering) {
				return fmt.Errorf("--numbering %q: want one of %s", numbering, strings.Join(request.Numberings, ", "))
			}
			if out == "" {
				out = strings.TrimSuffix(args[0], filepath.Ext(args[0])) + ".pdf"
			}
			sp, err := specs(c, stage.NameParse, stage.NameStyle, stage.NameRender)
			if err != nil {
				return err
			}
			sup := supervisor.New(log, c.PluginDir, supervisor.WithLogLevel(g.level(cmd)))
			ctx := cmd.Context()
			if err := sup.Start(ctx, sp); err != nil {
				return err
			}
			defer sup.Stop()
			var st pipeline.Stages
			if st.Parser, err = sup.Client(ctx, stage.NameParse); err != nil {
				return err
			}
			if st.Styler, err = sup.Client(ctx, stage.NameStyle); err != nil {
				return err
			}
			if st.Renderer, err = sup.Client(ctx, stage.NameRender); err != nil {
				return err
			}
			res, err := pipeline.New(nil).Run(ctx, st, pipeline.Job{
				Markdown: string(md), Theme: theme, Page: page, Numbering: stage.Numbering(numbering),
			})
			if err != nil {
				return fmt.Errorf("render %s: %w", args[0], err)
			}
			if err := os.WriteFile(out, res.PDF, 0o644); err != nil {
				return err
			}
			unit := "pages"
			if res.Pages == 1 {
				unit = "page"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: %d %s, %s (%s)\n", out, res.Pages, unit, pipeline.HumanBytes(int64(len(res.PDF))), c.Render.Plugin)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", "output file (default: IN with .pdf)")
	f.StringVar(&theme, "theme", request.DefaultTheme, "basic or modern")
	f.StringVar(&pageSize, "page-size", request.DefaultPageSize, "page size, e.g. A4, Letter")
	f.StringVar(&numbering, "numbering", request.DefaultNumbering, "none, left, center or right")
	f.StringVar(&backend, "backend", "", "chrome, fpdf or auto")
	return cmd
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}
