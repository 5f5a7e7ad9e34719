package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/mdpress/mdpress/core/accounts"
	"github.com/mdpress/mdpress/host/config"
)

func newAccounts(g *globals) *cobra.Command {
	cmd := group("accounts", "Create and manage accounts, credits and API keys")
	cmd.Example = `  mdpress accounts create --plan pro
  mdpress accounts list
  mdpress accounts credit usr_xuey7th575atc3y7zxsjw2wfsy 100
  mdpress accounts keys create usr_xuey7th575atc3y7zxsjw2wfsy`
	// opens opens the store for one subcommand and closes it after. Only
	// accounts create (mayCreate) starts a SQLite database that is not
	// there yet, and says where.
	opens := func(mayCreate bool, fn func(ctx context.Context, st accounts.Store, c *config.Config, cmd *cobra.Command, args []string) error) func(*cobra.Command, []string) error {
		return func(cmd *cobra.Command, args []string) error {
			c, err := g.load(cmd)
			if err != nil {
				return err
			}
			if path := missingSQLite(c); path != "" {
				// The data dir is relative to the working directory: run
				// from elsewhere, or with a mistyped --data-dir, every
				// command made an empty database of its own there, where
				// list showed no account and the accounts made went to a
				// database serve never read.
				if !mayCreate {
					wd, _ := os.Getwd()
					return fmt.Errorf("no account database at %s: name the data dir serve uses with --data-dir or %s "+
						"(a relative one is taken from the working directory, here %s)", path, config.Env.DataDir, wd)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "mdpress: new account database at %s\n", path)
			}
			st, err := openStore(cmd.Context(), c)
			if err != nil {
				return err
			}
			defer st.Close()
			return fn(cmd.Context(), st, c, cmd, args)
		}
	}

	var plan string
	var credits int64
	var asJSON bool
	create := &cobra.Command{
		Use:   "create --plan NAME [--credits N] [--json]",
		Short: "Create an account and its first API key (shown once)",
		Example: `  mdpress accounts create                          # on the free plan, with its monthly credits
  mdpress accounts create --plan pro --credits 20
  mdpress accounts create --plan pro --json        # for scripts`,
		Args: cobra.NoArgs,
		RunE: opens(true, func(ctx context.Context, st accounts.Store, c *config.Config, cmd *cobra.Command, _ []string) error {
			if err := knownPlan(c, plan); err != nil {
				return err
			}
			var start *int64
			if cmd.Flags().Changed("credits") {
				start = &credits
			}
			a, key, _, err := st.CreateAccountWithKey(ctx, plan, start)
			if err != nil {
				return err
			}
			out := cmd.OutOrStdout()
			if asJSON {
				return json.NewEncoder(out).Encode(map[string]any{"userId": a.ID, "apiKey": key, "plan": a.Plan, "credits": a.Credits})
			}
			fmt.Fprintf(out, "user:    %s\nplan:    %s\ncredits: %d\napi key: %s\n(the key is shown only now; it is stored hashed)\n", a.ID, a.Plan, a.Credits, key)
			return nil
		}),
	}
	create.Flags().StringVar(&plan, "plan", "free", "plan name from the config")
	create.Flags().Int64Var(&credits, "credits", 0, "starting balance (default: the plan's monthly credits)")
	create.Flags().BoolVar(&asJSON, "json", false, `print {"userId":..,"apiKey":..} as JSON`)

	var listJSON bool
	list := &cobra.Command{
		Use:   "list",
		Short: "List accounts",
		Example: `  mdpress accounts list
  mdpress accounts list --json --data-dir /var/lib/mdpress`,
		Args: cobra.NoArgs,
		RunE: opens(false, func(ctx context.Context, st accounts.Store, _ *config.Config, cmd *cobra.Command, _ []string) error {
			all, err := st.Accounts(ctx)
			if err != nil {
				return err
			}
			if listJSON {
				out := make([]map[string]any, len(all))
				for i, a := range all {
					out[i] = map[string]any{"userId": a.ID, "plan": a.Plan, "credits": a.Credits,
						"lastReset": a.LastReset.UTC().Format(time.RFC3339), "createdAt": a.CreatedAt.UTC().Format(time.RFC3339)}
				}
				return json.NewEncoder(cmd.OutOrStdout()).Encode(out)
			}
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 2, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "USER\tPLAN\tCREDITS\tLAST RESET\tCREATED")
			for _, a := range all {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\n", a.ID, a.Plan, a.Credits, a.LastReset.Format(time.RFC3339), a.CreatedAt.Format(time.RFC3339))
			}
			return tw.Flush()
		}),
	}
	list.Flags().BoolVar(&listJSON, "json", false, "print JSON")

	var reason string
	credit := &cobra.Command{
		Use:   "credit USER N",
		Short: "Add N credits to USER's balance (negative N takes away: credit USER -- -5)",
		Example: `  mdpress accounts credit usr_xuey7th575atc3y7zxsjw2wfsy 100 --reason refund
  mdpress accounts credit usr_xuey7th575atc3y7zxsjw2wfsy -- -5`,
		Args: cobra.ExactArgs(2),
		RunE: opens(false, func(ctx context.Context, st accounts.Store, _ *config.Config, cmd *cobra.Command, args []string) error {
			n, err := strconv.ParseInt(args[1], 10, 64)
			if err != nil {
				return fmt.Errorf("credit amount must be a whole number: %q", args[1])
			}
			a, err := st.Credit(ctx, args[0], n, reason)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s now has %d credits\n", a.ID, a.Credits)
			return nil
		}),
	}
	credit.Flags().StringVar(&reason, "reason", "operator credit", "ledger note")
	// A negative N reads as a flag to the parser: say how to pass it.
	credit.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		if strings.Contains(err.Error(), "unknown shorthand flag") {
			return fmt.Errorf("%w\nto take credits away, put -- before N: mdpress accounts credit USER -- -5", err)
		}
		return err
	})

	setPlan := &cobra.Command{
		Use:     "set-plan USER PLAN",
		Short:   "Move USER to PLAN (credits follow at the next monthly reset)",
		Example: `  mdpress accounts set-plan usr_xuey7th575atc3y7zxsjw2wfsy pro`,
		Args:    cobra.ExactArgs(2),
		RunE: opens(false, func(ctx context.Context, st accounts.Store, c *config.Config, cmd *cobra.Command, args []string) error {
			if err := knownPlan(c, args[1]); err != nil {
				return err
			}
			a, err := st.SetPlan(ctx, args[0], args[1])
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s is now on %s\n", a.ID, a.Plan)
			return nil
		}),
	}

	keys := group("keys", "Create, list and revoke API keys")
	keys.Example = `  mdpress accounts keys create usr_xuey7th575atc3y7zxsjw2wfsy
  mdpress accounts keys list usr_xuey7th575atc3y7zxsjw2wfsy
  mdpress accounts keys revoke key_c5uh6kdyoyx664f7hkjoolyyju`
	var keyJSON bool
	keyCreate := &cobra.Command{
		Use:   "create USER",
		Short: "Issue another API key for USER (shown once)",
		Example: `  mdpress accounts keys create usr_xuey7th575atc3y7zxsjw2wfsy
  mdpress accounts keys create usr_xuey7th575atc3y7zxsjw2wfsy --json`,
		Args: cobra.ExactArgs(1),
		RunE: opens(false, func(ctx context.Context, st accounts.Store, _ *config.Config, cmd *cobra.Command, args []string) error {
			key, info, err := st.CreateKey(ctx, args[0])
			if err != nil {
				return err
			}
			if keyJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(map[string]string{"userId": info.UserID, "keyId": info.ID, "apiKey": key})
			}
			fmt.Fprintf(cmd.OutOrStdout(), "key id:  %s\napi key: %s\n(the key is shown only now)\n", info.ID, key)
			return nil
		}),
	}
	keyCreate.Flags().BoolVar(&keyJSON, "json", false, "print JSON")
	keyList := &cobra.Command{
		Use:     "list USER",
		Short:   "List USER's keys (ids only; keys are never stored)",
		Example: `  mdpress accounts keys list usr_xuey7th575atc3y7zxsjw2wfsy`,
		Args:    cobra.ExactArgs(1),
		RunE: opens(false, func(ctx context.Context, st accounts.Store, _ *config.Config, cmd *cobra.Command, args []string) error {
			ks, err := st.Keys(ctx, args[0])
			if err != nil {
				return err
			}
			return printKeys(cmd.OutOrStdout(), ks)
		}),
	}
	keyRevoke := &cobra.Command{
		Use:     "revoke KEY_ID",
		Short:   "Revoke a key",
		Example: `  mdpress accounts keys revoke key_c5uh6kdyoyx664f7hkjoolyyju   # an id from keys list`,
		Args:    cobra.ExactArgs(1),
		RunE: opens(false, func(ctx context.Context, st accounts.Store, _ *config.Config, cmd *cobra.Command, args []string) error {
			if err := st.RevokeKey(ctx, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "revoked %s\n", args[0])
			return nil
		}),
	}
	keys.AddCommand(keyCreate, keyList, keyRevoke)
	cmd.AddCommand(create, list, credit, setPlan, keys)
	return cmd
}

// missingSQLite is the SQLite database the config names when it does not
// exist yet, or "": also when the DSN is no file path (a PostgreSQL URL
// without accounts.driver), which opening the store refuses, saying why.
func missingSQLite(c *config.Config) string {
	if c.Accounts.Driver != accounts.DriverSQLite || accounts.CheckSQLitePath(accountsDSN(c)) != nil {
		return ""
	}
	path := accounts.Where(c.Accounts.Driver, accountsDSN(c))
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return path
	}
	return ""
}

func printKeys(w io.Writer, ks []accounts.KeyInfo) error {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "KEY ID\tCREATED\tREVOKED")
	for _, k := range ks {
		revoked := "-"
		if k.Revoked() {
			revoked = k.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\n", k.ID, k.CreatedAt.Format(time.RFC3339), revoked)
	}
	return tw.Flush()
}

// ensureDevAccount creates an account with a key when the store has none,
// and prints the key: the `make run` first-start experience.
func ensureDevAccount(ctx context.Context, c *config.Config, plan string, out io.Writer) error {
	// Checked here, not by the store: its "unknown plan" named neither
	// the setting nor the plans there are.
	if err := knownPlan(c, plan); err != nil {
		return fmt.Errorf("--dev-plan (MDPRESS_DEV_PLAN): %w", err)
	}
	st, err := openStore(ctx, c)
	if err != nil {
		return err
	}
	defer st.Close()
	all, err := st.Accounts(ctx)
	if err != nil {
		return err
	}
	if len(all) > 0 {
		hint := "bin/mdpress accounts keys create " + all[0].ID
		// Copied as printed, the command used ./data: on any other data
		// dir it found no database, or another one.
		if def, err := filepath.Abs("data"); c.Accounts.Driver == accounts.DriverSQLite && (err != nil || def != c.DataDir) {
			hint += " --data-dir " + shellQuote(c.DataDir)
		}
		fmt.Fprintf(out, "mdpress: %d account(s) exist; create another key with: %s\n", len(all), hint)
		return nil
	}
	// One transaction: a key that failed to be made after its account
	// would leave an account that every later start reports as existing,
	// with no key ever printed for it.
	a, key, _, err := st.CreateAccountWithKey(ctx, plan, nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "\nmdpress: created development account %s (plan %s, %d credits)\n", a.ID, a.Plan, a.Credits)
	fmt.Fprintf(out, "mdpress: API key (shown once, stored hashed):\n\n    export MDPRESS_KEY=%s\n\n", key)
	fmt.Fprintf(out, "  curl -H \"Authorization: Bearer $MDPRESS_KEY\" -H 'Content-Type: application/json' \\\n    -d '{\"markdown\":\"# Hi\"}' %s/v1/pdf/markdown -o hi.pdf\n\n", c.PublicURL())
	return nil
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// letters, digits and / . _ - + : , @ %.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/._-+:,@%") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func knownPlan(c *config.Config, name string) error {
	if _, ok := c.Plan(name); ok {
		return nil
	}
	names := make([]string, len(c.Plans))
	for i, p := range c.Plans {
		names[i] = p.Name
	}
	return fmt.Errorf("unknown plan %q (configured plans: %s)", name, strings.Join(names, ", "))
}
