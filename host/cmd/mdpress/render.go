package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/mdpress/mdpress/core/papers"
	"github.com/mdpress/mdpress/core/pipeline"
	"github.com/mdpress/mdpress/core/request"
	"github.com/mdpress/mdpress/host/config"
	"github.com/mdpress/mdpress/host/supervisor"
	"github.com/mdpress/mdpress/sdk/stage"
)

func newRender(g *globals) *cobra.Command {
	var out, theme, pageSize, numbering, lang, backend string
	cmd := &cobra.Command{
		Use:         "render IN.md",
		Annotations: quiet,
		Short:       "Render a local Markdown file to PDF through the parse, style and render plugins (no account, no credits)",
		Long: "Render a local Markdown file to PDF through the parse, style and render plugins (no account, no credits).\n" +
			"IN.md \"-\" reads standard input, and -o \"-\" writes the PDF to standard output (the default when reading standard input).",
		Example: `  mdpress render notes.md                        # writes notes.pdf
  mdpress render notes.md -o report.pdf --theme basic --page-size Letter --numbering right
  mdpress render notes.md --backend fpdf --lang fr
  cat notes.md | mdpress render - > notes.pdf`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := envTwins(cmd, twin{"theme", "MDPRESS_THEME"}, twin{"page-size", "MDPRESS_PAGE_SIZE"},
				twin{"numbering", "MDPRESS_NUMBERING"}); err != nil {
				return err
			}
			log := g.logger(cmd)
			c, err := g.load(cmd, func(c *config.Config) {
				if cmd.Flags().Changed("backend") {
					c.SetBackend(backend)
				}
			})
			if err != nil {
				return err
			}
			resolveRender(c, log)
			in := args[0]
			var md []byte
			if in == "-" {
				md, err = io.ReadAll(cmd.InOrStdin())
			} else {
				md, err = os.ReadFile(in)
			}
			if err != nil {
				return err
			}
			if err := checkEmpty(in, md); err != nil {
				return err
			}
			if err := checkUTF8(in, md); err != nil {
				return err
			}
			page, ok := papers.LookupFold(pageSize)
			if !ok {
				return fmt.Errorf("--page-size (or MDPRESS_PAGE_SIZE) %q: want one of %s", pageSize, strings.Join(papers.Names(), ", "))
			}
			if !contains(request.Themes, theme) {
				return fmt.Errorf("--theme (or MDPRESS_THEME) %q: want one of %s", theme, strings.Join(request.Themes, ", "))
			}
			if !contains(request.Numberings, numbering) {
				return fmt.Errorf("--numbering (or MDPRESS_NUMBERING) %q: want one of %s", numbering, strings.Join(request.Numberings, ", "))
			}
			if cmd.Flags().Changed("lang") {
				canonical, err := request.ParseLang(lang)
				if err != nil {
					return fmt.Errorf("--lang %q: want a BCP 47 language tag such as fr, pt-BR or zh-Hans", lang)
				}
				lang = canonical
			}
			switch {
			case out == "" && in == "-":
				out = "-"
			case out == "":
				out = strings.TrimSuffix(in, filepath.Ext(in)) + ".pdf"
			}
			// -o notes.md (a completion one letter too far), or a
			// source named x.pdf, wrote the PDF over the Markdown; an
			// output that cannot be written was found after the render.
			if err := checkOutput(in, out); err != nil {
				return err
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
				Markdown: string(md), Theme: theme, Page: page, Numbering: stage.Numbering(numbering), Lang: lang,
			})
			if err != nil {
				return fmt.Errorf("render %s: %w", in, err)
			}
			// The summary goes where the PDF does not.
			report, name := cmd.OutOrStdout(), out
			if out == "-" {
				name = "standard output"
				if _, err := cmd.OutOrStdout().Write(res.PDF); err != nil {
					return err
				}
				report = cmd.ErrOrStderr()
			} else if err := os.WriteFile(out, res.PDF, 0o644); err != nil {
				return err
			}
			unit := "pages"
			if res.Pages == 1 {
				unit = "page"
			}
			fmt.Fprintf(report, "%s: %d %s, %s (%s)\n", name, res.Pages, unit, pipeline.HumanBytes(int64(len(res.PDF))), c.Render.Plugin)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVarP(&out, "output", "o", "", `output file, "-" for standard output (default: IN with .pdf)`)
	f.StringVar(&theme, "theme", request.DefaultTheme, "basic or modern (env MDPRESS_THEME)")
	f.StringVar(&pageSize, "page-size", request.DefaultPageSize, "page size, e.g. A4, Letter (env MDPRESS_PAGE_SIZE)")
	f.StringVar(&numbering, "numbering", request.DefaultNumbering, "none, left, center or right (env MDPRESS_NUMBERING)")
	// A document's language belongs to that document, so it has no
	// environment twin to carry over to the next one.
	f.StringVar(&lang, "lang", "", "the document's language, a BCP 47 tag such as fr or pt-BR (default: none claimed)")
	f.StringVar(&backend, "backend", "", "chrome, fpdf, auto or a render plugin's name (env MDPRESS_BACKEND)")
	return cmd
}

// checkEmpty refuses an empty input, as the API refuses an empty markdown
// field: it printed a blank page and exited 0, so a pipe whose producer
// failed (`curl -s URL | mdpress render -`) looked like a render.
func checkEmpty(name string, md []byte) error {
	if len(md) > 0 {
		return nil
	}
	if name == "-" {
		return errors.New("standard input is empty: nothing to render")
	}
	return fmt.Errorf("%s is empty: nothing to render", name)
}

// checkUTF8 refuses Markdown that is not UTF-8, naming where, since the
// plugins' gRPC cannot carry it: a Latin-1 file failed as "parse: internal
// error: ... string field contains invalid UTF-8", which says neither
// which file nor what to do. The API never sees such bytes: JSON decoding
// turns each into U+FFFD.
func checkUTF8(name string, md []byte) error {
	if utf8.Valid(md) {
		return nil
	}
	if name == "-" {
		name = "standard input"
	}
	if bytes.HasPrefix(md, []byte{0xff, 0xfe}) || bytes.HasPrefix(md, []byte{0xfe, 0xff}) {
		return fmt.Errorf("%s is UTF-16, not UTF-8; convert it first, e.g. iconv -f utf-16 -t utf-8", name)
	}
	line, col := 1, 1
	for i := 0; i < len(md); {
		r, size := utf8.DecodeRune(md[i:])
		if r == utf8.RuneError && size == 1 {
			return fmt.Errorf("%s is not UTF-8: byte 0x%02x at line %d, column %d; convert it first, e.g. iconv -f latin1 -t utf-8", name, md[i], line, col)
		}
		if r == '\n' {
			line, col = line+1, 0
		}
		col++
		i += size
	}
	return nil
}

// checkOutput refuses, before any plugin starts, an output path that
// names the input file (through a link or not), a directory, or a file in
// a directory that does not exist.
func checkOutput(in, out string) error {
	if out == "-" {
		return nil
	}
	so, err := os.Stat(out)
	if err == nil && so.IsDir() {
		name := "document"
		if in != "-" {
			name = strings.TrimSuffix(filepath.Base(in), filepath.Ext(in))
		}
		return fmt.Errorf("the output %s is a directory: name a file with -o, e.g. -o %s", out, filepath.Join(out, name+".pdf"))
	}
	if err != nil {
		if d, derr := os.Stat(filepath.Dir(out)); errors.Is(derr, os.ErrNotExist) {
			return fmt.Errorf("the output %s is in %s, which does not exist", out, filepath.Dir(out))
		} else if derr == nil && !d.IsDir() {
			return fmt.Errorf("the output %s is in %s, which is not a directory", out, filepath.Dir(out))
		}
		return nil
	}
	if in == "-" {
		return nil
	}
	if si, err := os.Stat(in); err == nil && os.SameFile(si, so) {
		return fmt.Errorf("the output %s is the input file %s: the PDF would overwrite the Markdown; name another with -o", out, in)
	}
	return nil
}

func contains(list []string, v string) bool {
	for _, s := range list {
		if s == v {
			return true
		}
	}
	return false
}
