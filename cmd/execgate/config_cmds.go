package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"
	"unicode"

	"github.com/spf13/cobra"
	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
	"github.com/execgate/execgate/shim"
)

// lockWait bounds how long an edit waits for another writer.
const lockWait = 30 * time.Second

// errNoChange lets an edit tell Store.Update there is nothing to write.
var errNoChange = errors.New("no change")

// configCommands returns the config-editing subcommands (allow, deny,
// allowlist, policy, config check|edit).
func configCommands(g *globals) []*cobra.Command {
	return []*cobra.Command{
		newConfigCmd(g),
		newListEditCmd(g, listAllow),
		newListEditCmd(g, listDeny),
		newAllowlistCmd(g),
		newPolicyCmd(g),
	}
}

// listKind describes the two pattern lists for the allow and deny commands.
type listKind struct {
	name, done, already, short string
	add                        func(d *config.Document, agent string, e pattern.Entry) bool
}

var (
	listAllow = listKind{
		name: "allow", done: "allowed", already: "already allowed",
		short: "Add a pattern to an agent's allowlist (default agent *)",
		add:   (*config.Document).AddAllowlist,
	}
	listDeny = listKind{
		name: "deny", done: "denied", already: "already denied",
		short: "Add a pattern to an agent's denylist (default agent *)",
		add:   (*config.Document).AddDenylist,
	}
)

func configPath(g *globals) string { return config.ConfigPath(g.config, g.getenv) }

// loadForRead loads the configuration for a command that only reads it,
// printing its warnings; bad reports a file that could not be used, whose
// refusal line has been printed too (cfg is then the strictest policy,
// which is what applies).
func loadForRead(g *globals) (cfg *config.Config, path string, bad bool) {
	path = configPath(g)
	cfg, _, warnings, err := config.Load(path)
	for _, w := range warnings {
		fmt.Fprintf(g.stderr, "execgate: warning: %s: %s\n", path, w)
	}
	if err != nil {
		fmt.Fprintln(g.stderr, unusableLine(g, err).Error())
		return cfg, path, true
	}
	return cfg, path, false
}

// update runs one locked edit of the configuration file. A file that cannot
// be parsed is left exactly as it is: Update refuses it, saying where and
// why, and the command exits non-zero.
func update(ctx context.Context, g *globals, edit func(*config.Document) error) error {
	ctx, cancel := context.WithTimeout(ctx, lockWait)
	defer cancel()
	store := &config.Store{Path: configPath(g)}
	_, err := store.Update(ctx, "", edit)
	return err
}

// onePattern insists on exactly one PATTERN argument: a pattern the shell
// split into words would silently mean something else.
func onePattern(name string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		switch {
		case len(args) == 0:
			return usagef("%s needs a PATTERN, for example: execgate %s 'git push **'", name, name)
		case len(args) > 1:
			q, err := syntax.Quote(strings.Join(args, " "), syntax.LangBash)
			if err != nil {
				q = "'" + strings.Join(args, " ") + "'"
			}
			return usagef("%s takes one PATTERN but got %d words; quote it: execgate %s %s", name, len(args), name, q)
		}
		return nil
	}
}

func newListEditCmd(g *globals, k listKind) *cobra.Command {
	cmd := &cobra.Command{
		Use:   k.name + " PATTERN",
		Short: k.short,
		Args:  onePattern(k.name),
		RunE: func(cmd *cobra.Command, args []string) error {
			pat := args[0]
			if err := pattern.ValidatePattern(pat); err != nil {
				return usagef("invalid pattern %s: %v", strconv.Quote(pat), err)
			}
			agent := g.agent
			if agent == "" {
				agent = config.WildcardAgent
			}
			err := update(cmd.Context(), g, func(d *config.Document) error {
				if !k.add(d, agent, pattern.Entry{Pattern: pat, Source: "cli"}) {
					return errNoChange
				}
				return nil
			})
			switch {
			case errors.Is(err, errNoChange):
				fmt.Fprintf(g.stdout, "%s: %s for agent %s\n", k.already, strconv.Quote(pat), agent)
				return nil
			case err != nil:
				return err
			}
			fmt.Fprintf(g.stdout, "%s %s for agent %s\n", k.done, strconv.Quote(pat), agent)
			return nil
		},
	}
	// An unquoted `rm -rf **` reaches the flag parser as -rf.
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error {
		return usagef("%v (quote the PATTERN as one argument: execgate %s 'rm -rf **')", err, k.name)
	})
	return cmd
}

// listRow is one line of `execgate allowlist`.
type listRow struct {
	Agent string `json:"agent"`
	List  string `json:"list"`
	pattern.Entry
}

func newAllowlistCmd(g *globals) *cobra.Command {
	var asJSON bool
	var remove string
	cmd := &cobra.Command{
		Use:   "allowlist",
		Short: "List allowlist and denylist entries, or remove one (--remove PATTERN|ID)",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("allowlist takes no arguments (to remove an entry: execgate allowlist --remove 'PATTERN' or --remove ID)")
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cmd.Flags().Changed("remove") {
				if remove == "" {
					return usagef("--remove needs a PATTERN or an ID")
				}
				return removeEntries(cmd.Context(), g, remove)
			}
			return listEntries(g, asJSON)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the entries as JSON")
	cmd.Flags().StringVar(&remove, "remove", "", "remove the entries with this pattern or ID (from both lists)")
	return cmd
}

// agentNames returns the agents a list command covers: the --agent one, or
// all of them.
func agentNames(g *globals, cfg *config.Config) []string {
	if g.agent != "" {
		return []string{g.agent}
	}
	names := make([]string, 0, len(cfg.Agents))
	for name := range cfg.Agents {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func listEntries(g *globals, asJSON bool) error {
	cfg, path, bad := loadForRead(g)
	rows := []listRow{}
	for _, name := range agentNames(g, cfg) {
		a := cfg.Agents[name]
		for _, e := range a.Allowlist {
			rows = append(rows, listRow{Agent: name, List: "allow", Entry: e})
		}
		for _, e := range a.Denylist {
			rows = append(rows, listRow{Agent: name, List: "deny", Entry: e})
		}
	}
	switch {
	case asJSON:
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rows); err != nil {
			return fmt.Errorf("print entries: %w", err)
		}
	case len(rows) == 0 && g.agent != "":
		fmt.Fprintf(g.stdout, "no entries for agent %s in %s\n", g.agent, path)
	case len(rows) == 0:
		fmt.Fprintf(g.stdout, "no entries in %s\n", path)
	default:
		now := time.Now()
		tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
		fmt.Fprintln(tw, "AGENT\tLIST\tPATTERN\tID\tSOURCE\tLAST USED\tLAST COMMAND")
		for _, r := range rows {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(r.Agent), r.List, cell(r.Pattern), cell(r.ID),
				cell(r.Source), lastUsed(r.LastUsedAt, now), cell(r.LastUsedCommand))
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("print entries: %w", err)
		}
	}
	if bad {
		return exitCodeError{exitError}
	}
	return nil
}

// cell shows a value in one table cell: shortened, and quoted when it holds
// characters that would break the layout.
func cell(s string) string {
	if s == "" {
		return "-"
	}
	const limit = 60
	if r := []rune(s); len(r) > limit {
		s = string(r[:limit-1]) + "…"
	}
	if strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		return strconv.Quote(s)
	}
	return s
}

// lastUsed shows a Unix-millisecond time relative to now when recent, as a
// date otherwise.
func lastUsed(ms int64, now time.Time) string {
	if ms == 0 {
		return "never"
	}
	t := time.UnixMilli(ms)
	d := now.Sub(t)
	switch {
	case d < 0 || d >= 7*24*time.Hour:
		return t.Local().Format("2006-01-02 15:04")
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d/time.Minute))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh ago", int(d/time.Hour))
	}
	return fmt.Sprintf("%dd ago", int(d/(24*time.Hour)))
}

func removeEntries(ctx context.Context, g *globals, target string) error {
	if _, _, bad := loadForRead(g); bad {
		return errors.New("not removing anything from a damaged file; fix it first")
	}
	var lines []string
	err := update(ctx, g, func(d *config.Document) error {
		cfg, err := d.Config()
		if err != nil {
			return err
		}
		lines = lines[:0]
		for _, name := range agentNames(g, cfg) {
			a := cfg.Agents[name]
			shown := 0
			for _, l := range []struct {
				list    string
				entries []pattern.Entry
			}{{"allowlist", a.Allowlist}, {"denylist", a.Denylist}} {
				for _, e := range l.entries {
					if e.Pattern == target || e.ID == target {
						lines = append(lines, fmt.Sprintf("removed %s (id %s) from the %s of agent %s",
							strconv.Quote(e.Pattern), cell(e.ID), l.list, name))
						shown++
					}
				}
			}
			// Entries the typed view dropped as invalid can match too.
			if n := d.RemoveEntry(name, target); n > shown {
				lines = append(lines, fmt.Sprintf("removed %d invalid entries matching %s from agent %s",
					n-shown, strconv.Quote(target), name))
			}
		}
		if len(lines) == 0 {
			return errNoChange
		}
		return nil
	})
	if errors.Is(err, errNoChange) {
		where := "any agent"
		if g.agent != "" {
			where = "agent " + g.agent
		}
		return fmt.Errorf("no entry with pattern or ID %s for %s", strconv.Quote(target), where)
	}
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(g.stdout, l)
	}
	return nil
}

// fieldViews shows each policy field, and tells whether a level sets it.
var fieldViews = [...]struct {
	key   string
	level func(config.PolicyFields) (string, bool)
	value func(config.Policy) string
}{
	{"security",
		func(f config.PolicyFields) (string, bool) { return string(f.Security), f.Security != "" },
		func(p config.Policy) string { return string(p.Security) }},
	{"ask",
		func(f config.PolicyFields) (string, bool) { return string(f.Ask), f.Ask != "" },
		func(p config.Policy) string { return string(p.Ask) }},
	{"askFallback",
		func(f config.PolicyFields) (string, bool) { return string(f.AskFallback), f.AskFallback != "" },
		func(p config.Policy) string { return string(p.AskFallback) }},
	{"timeoutMs",
		func(f config.PolicyFields) (string, bool) {
			if f.TimeoutMs == nil {
				return "", false
			}
			return strconv.Itoa(*f.TimeoutMs), true
		},
		func(p config.Policy) string { return strconv.Itoa(p.TimeoutMs) }},
	{"autoAllowSafe",
		func(f config.PolicyFields) (string, bool) {
			if f.AutoAllowSafe == nil {
				return "", false
			}
			return strconv.FormatBool(*f.AutoAllowSafe), true
		},
		func(p config.Policy) string { return strconv.FormatBool(p.AutoAllowSafe) }},
	{"autoAllowWorkspaceRunners",
		func(f config.PolicyFields) (string, bool) {
			if f.AutoAllowWorkspaceRunners == nil {
				return "", false
			}
			return strconv.FormatBool(*f.AutoAllowWorkspaceRunners), true
		},
		func(p config.Policy) string { return strconv.FormatBool(p.AutoAllowWorkspaceRunners) }},
}

func fieldKeys() string {
	keys := make([]string, len(fieldViews))
	for i, f := range fieldViews {
		keys[i] = f.key
	}
	return strings.Join(keys, ", ")
}

func newPolicyCmd(g *globals) *cobra.Command {
	var asJSON bool
	get := func(*cobra.Command, []string) error { return policyGet(g, asJSON) }
	cmd := &cobra.Command{
		Use:   "policy [get|set|sandbox]",
		Short: "Show the effective policy of an agent and where each field comes from, or set fields",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("unknown policy subcommand %s (want get, set or sandbox)", strconv.Quote(args[0]))
			}
			return nil
		},
		RunE: get,
	}
	getCmd := &cobra.Command{
		Use:   "get",
		Short: "Show the effective policy of an agent (default: the detected one)",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) > 0 {
				return usagef("policy get takes no arguments (use --agent ID)")
			}
			return nil
		},
		RunE: get,
	}
	setCmd := &cobra.Command{
		Use:   "set KEY=VALUE...",
		Short: "Set policy fields for --agent, or the defaults (an empty VALUE unsets)",
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return usagef("policy set needs KEY=VALUE arguments (keys: %s)", fieldKeys())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error { return policySet(cmd.Context(), g, args) },
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the policy as JSON")
	getCmd.Flags().BoolVar(&asJSON, "json", false, "print the policy as JSON")
	cmd.AddCommand(getCmd, setCmd, newPolicySandboxCmd(g))
	return cmd
}

// policyView is `execgate policy get --json`.
type policyView struct {
	Agent   string            `json:"agent"`
	Config  string            `json:"config"`
	Policy  config.Policy     `json:"policy"`
	Sources map[string]string `json:"sources"`
	// Session says what changed the configured policy for now: the hub's
	// session override, the environment.
	Session []string `json:"session,omitempty"`
	// Managed is the managed policy file, when one applies; Overruled
	// lists the settings of the user's file it does not let apply.
	Managed   string   `json:"managed,omitempty"`
	Overruled []string `json:"overruled,omitempty"`
}

// Levels a policy field can come from, strongest first.
const (
	fromAgent    = "agent"
	fromWildcard = "*"
	fromDefaults = "defaults"
	fromBuiltin  = "built-in"
	fromManaged  = config.ManagedSource
)

func policyGet(g *globals, asJSON bool) error {
	cfg, path, bad := loadForRead(g)
	agent := config.DetectAgent(g.agent, g.getenv, os.Environ())
	view := policyView{Agent: agent, Config: path, Policy: cfg.Resolve(agent).Policy, Sources: map[string]string{}}
	configured := view.Policy
	view.Policy, view.Session = shim.SessionPolicy(context.Background(), cfg, g.getenv, agent, view.Policy)

	type level struct {
		name   string
		fields config.PolicyFields
	}
	var levels []level
	if a, ok := cfg.Agents[agent]; ok && agent != config.WildcardAgent {
		levels = append(levels, level{fromAgent, a.PolicyFields})
	}
	if a, ok := cfg.Agents[config.WildcardAgent]; ok {
		levels = append(levels, level{fromWildcard, a.PolicyFields})
	}
	levels = append(levels, level{fromDefaults, cfg.Defaults})
	for _, f := range fieldViews {
		view.Sources[f.key] = fromBuiltin
		for _, l := range levels {
			if _, set := f.level(l.fields); set {
				view.Sources[f.key] = l.name
				break
			}
		}
	}
	// A field the managed floor holds comes from there, whatever the
	// user's levels say; they are named too.
	for key, was := range cfg.ManagedFields(agent) {
		view.Sources[key] = fromManaged + "; configured " + was + " from " + view.Sources[key]
	}
	if cfg.Managed != nil {
		view.Managed = cfg.Managed.Path
		view.Overruled = cfg.ManagedConflicts()
	}

	if asJSON {
		enc := json.NewEncoder(g.stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(view); err != nil {
			return fmt.Errorf("print policy: %w", err)
		}
	} else {
		fmt.Fprintf(g.stdout, "policy for agent %s (%s)\n", agent, path)
		tw := tabwriter.NewWriter(g.stdout, 0, 4, 2, ' ', 0)
		for _, f := range fieldViews {
			source := view.Sources[f.key]
			if f.value(view.Policy) != f.value(configured) {
				source = "session; configured " + f.value(configured) + " from " + source
			}
			fmt.Fprintf(tw, "%s\t%s\t(%s)\n", f.key, f.value(view.Policy), source)
		}
		if err := tw.Flush(); err != nil {
			return fmt.Errorf("print policy: %w", err)
		}
		for _, n := range view.Session {
			fmt.Fprintf(g.stdout, "%s\n", n)
		}
		if view.Managed != "" {
			fmt.Fprintf(g.stdout, "a managed policy applies (%s): it can only tighten this one\n", view.Managed)
		}
		for _, o := range view.Overruled {
			fmt.Fprintf(g.stdout, "overruled: %s\n", o)
		}
	}
	if bad {
		return exitCodeError{exitError}
	}
	return nil
}

func policySet(ctx context.Context, g *globals, args []string) error {
	type change struct{ key, value string }
	var changes []change
	var scratch config.Document
	for _, a := range args {
		key, value, ok := strings.Cut(a, "=")
		if !ok || key == "" {
			return usagef("policy set: %s is not KEY=VALUE (keys: %s)", strconv.Quote(a), fieldKeys())
		}
		if slices.ContainsFunc(changes, func(c change) bool { return c.key == key }) {
			return usagef("policy set: %s given twice", key)
		}
		// Validate everything before touching the file: all or nothing.
		if err := scratch.SetPolicyField(g.agent, key, value); err != nil {
			return usagef("policy set: %v", err)
		}
		changes = append(changes, change{key, value})
	}

	where := "defaults"
	if g.agent != "" {
		where = "agent " + g.agent
	}
	// fields returns the level being edited, as the file stands.
	fields := func(d *config.Document) (config.PolicyFields, error) {
		cfg, err := d.Config()
		if err != nil {
			return config.PolicyFields{}, err
		}
		if g.agent == "" {
			return cfg.Defaults, nil
		}
		return cfg.Agents[g.agent].PolicyFields, nil
	}
	var lines []string
	err := update(ctx, g, func(d *config.Document) error {
		before, err := fields(d)
		if err != nil {
			return err
		}
		for _, c := range changes {
			if err := d.SetPolicyField(g.agent, c.key, c.value); err != nil {
				return err
			}
		}
		after, err := fields(d)
		if err != nil {
			return err
		}
		lines = lines[:0]
		for _, c := range changes {
			for _, f := range fieldViews {
				if f.key != c.key {
					continue
				}
				was, wasSet := f.level(before)
				if !wasSet {
					was = "unset"
				}
				if now, set := f.level(after); set {
					lines = append(lines, fmt.Sprintf("%s: %s = %s (was %s)", where, c.key, now, was))
				} else {
					lines = append(lines, fmt.Sprintf("%s: %s unset (was %s)", where, c.key, was))
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, l := range lines {
		fmt.Fprintln(g.stdout, l)
	}
	// Saved, and said at once when the managed policy does not let it
	// apply: never a setting that silently does nothing.
	if cfg, _, _, err := config.Load(configPath(g)); err == nil {
		for _, c := range changes {
			if o := cfg.ManagedConflict(g.agent, c.key); o != "" {
				fmt.Fprintf(g.stdout, "overruled: %s\n", o)
			}
		}
	}
	return nil
}
