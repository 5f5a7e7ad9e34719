package main

import (
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/mdpress/mdpress/host/config"
	"github.com/mdpress/mdpress/host/supervisor"
	"github.com/mdpress/mdpress/sdk/stage"
)

// stageFlags adds serve's --backend and --sink to cmd and returns what
// applies them to a loaded config: an operator checks the plugins serve
// would run with the flags serve is given, where only their environment
// twins reached these commands.
func stageFlags(cmd *cobra.Command) func(*config.Config) {
	var backend, sink string
	f := cmd.Flags()
	f.StringVar(&backend, "backend", "", "render backend: chrome, fpdf, auto or a render plugin's name (env "+config.Env.Backend+")")
	f.StringVar(&sink, "sink", "", "hosted-file sink: disk, s3 or a sink plugin's name (env "+config.Env.Sink+")")
	return func(c *config.Config) {
		if f.Changed("backend") {
			c.SetBackend(backend)
		}
		if f.Changed("sink") {
			c.SetSink(sink)
		}
	}
}

func newPlugins(g *globals) *cobra.Command {
	cmd := group("plugins", "List and check the stage plugins")
	cmd.Example = `  mdpress plugins list
  mdpress plugins check --backend fpdf`
	var listFlags, checkFlags func(*config.Config)
	list := &cobra.Command{
		Use:         "list",
		Annotations: quiet,
		Short:       "List plugin binaries and which stage each configured one serves",
		Example: `  mdpress plugins list
  mdpress plugins list --plugin-dir /opt/mdpress/plugins --backend fpdf`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := g.load(cmd, listFlags)
			if err != nil {
				return err
			}
			resolveRender(c, g.logger(cmd))
			entries, err := os.ReadDir(c.PluginDir)
			if err != nil {
				return fmt.Errorf("plugin dir: %w", err)
			}
			// A plugin named for two stages (MDPRESS_BACKEND=sink-disk) is
			// listed with both: one of them, picked by map order, hid the
			// other.
			used := map[string][]string{}
			for s, p := range c.StagePlugins() {
				used[p] = append(used[p], s)
			}
			found := map[string]bool{}
			names := []string{}
			for _, e := range entries {
				if !e.IsDir() {
					names = append(names, e.Name())
					found[e.Name()] = true
				}
			}
			// A configured plugin without its binary is listed too: left
			// out, its stage simply vanished from the table.
			for p := range used {
				if !found[p] {
					names = append(names, p)
				}
			}
			sort.Strings(names)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintf(tw, "PLUGIN\tSTAGE IN USE\t(%s)\n", c.PluginDir)
			for _, n := range names {
				s := "-"
				if len(used[n]) > 0 {
					sort.Strings(used[n])
					s = strings.Join(used[n], ", ")
				}
				missing := ""
				if !found[n] {
					missing = "missing"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", n, s, missing)
			}
			return tw.Flush()
		},
	}
	var asJSON bool
	check := &cobra.Command{
		Use:         "check",
		Annotations: quiet,
		Short:       "Start every configured plugin, configure and health-check it, then stop",
		Example: `  mdpress plugins check                                   # exits 1 if any plugin fails
  mdpress plugins check --config /etc/mdpress/production.yaml --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			log := g.logger(cmd)
			c, err := g.load(cmd, checkFlags)
			if err != nil {
				return err
			}
			resolveRender(c, log)
			if err := os.MkdirAll(c.DataDir, 0o750); err != nil {
				return err
			}
			sp, err := specs(c, stage.Names...)
			if err != nil {
				return err
			}
			sup := supervisor.New(log, c.PluginDir, supervisor.WithLogLevel(g.level(cmd)))
			startErr := sup.Start(cmd.Context(), sp)
			defer sup.Stop()
			if startErr != nil {
				return startErr
			}
			status := sup.Status()
			info := sup.Info()
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]any{"status": status, "info": jsonInfo(info)})
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "STAGE\tPLUGIN\tHEALTHY\tVERSION\tCAPABILITIES")
			for _, s := range status {
				fmt.Fprintf(tw, "%s\t%s\t%v\t%s\t%v\n", s.Stage, s.Plugin, s.Healthy, info[s.Stage].Version, info[s.Stage].Capabilities)
			}
			return tw.Flush()
		},
	}
	check.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	listFlags, checkFlags = stageFlags(list), stageFlags(check)
	cmd.AddCommand(list, check)
	return cmd
}

// pluginInfo is a stage.Info as `plugins check --json` prints it. The
// struct itself has no JSON tags, so its keys came out as Go names
// ("Name", "Capabilities": null) beside status's "stage" and "plugin".
type pluginInfo struct {
	Name         string   `json:"name"`
	Version      string   `json:"version"`
	Capabilities []string `json:"capabilities"`
}

func jsonInfo(info map[string]stage.Info) map[string]pluginInfo {
	out := make(map[string]pluginInfo, len(info))
	for st, in := range info {
		caps := in.Capabilities
		if caps == nil {
			caps = []string{}
		}
		out[st] = pluginInfo{Name: in.Name, Version: in.Version, Capabilities: caps}
	}
	return out
}
