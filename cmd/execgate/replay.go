package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/replay"
	"github.com/execgate/execgate/shim"
)

type replayFlags struct {
	json, jsonl bool
}

func newReplayCmd(g *globals) *cobra.Command {
	var f replayFlags
	cmd := &cobra.Command{
		Use:   "replay [flags] [PATH…]",
		Short: "Say what execgate would have done with an agent's past commands",
		Long: `replay reads the transcripts agents keep of the shell commands they ran and
judges every command as the shim would under your configuration, without
running anything: how many would have run unasked, asked or been refused,
how many questions each session would have had and why, the dangerous
commands it would have stopped, and the allowlist entries that would have
spared the most questions.

Without PATH it reads Claude Code's ~/.claude/projects, Codex's
~/.codex/sessions and Gemini CLI's ~/.gemini/tmp. A PATH may be a
transcript or a directory to search: Claude Code's session logs, Codex's
rollouts, Gemini CLI's chats (and, named, its checkpoints), and
mini-swe-agent and SWE-agent trajectories (*.traj.json, *.traj).

Each command is judged in the directory its transcript recorded, when
that still exists, and under the policy of the agent that ran it (--agent
judges everything under one). A record that cannot be read is listed on
stderr as file:line: what, and skipped. --json prints the report as one
JSON object (its schema is in the README); --jsonl prints one JSON object
per command instead.`,
		Example: `  execgate replay
  execgate replay --json ~/.codex/sessions > replay.json
  execgate replay run-42/instance.traj.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runReplay(cmd.Context(), g, f, args)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.json, "json", false, "print the report as one JSON object")
	fl.BoolVar(&f.jsonl, "jsonl", false, "print one JSON object per command, with its verdict, instead of the report")
	return cmd
}

func runReplay(ctx context.Context, g *globals, f replayFlags, paths []string) error {
	if f.json && f.jsonl {
		return usagef("--json and --jsonl cannot be used together")
	}
	if ctx == nil {
		ctx = context.Background()
	}
	home := g.getenv("HOME")
	if len(paths) == 0 {
		paths = replay.DefaultPaths(home, g.getenv)
		if len(paths) == 0 {
			return lineError{"execgate: replay: no transcripts in ~/.claude/projects, ~/.codex/sessions or ~/.gemini/tmp; name the files or directories to read"}
		}
	}
	judge, err := newReplayJudge(ctx, g)
	if err != nil {
		return err
	}
	o := replay.Options{Paths: paths, Judge: judge,
		Problem: func(p replay.Problem) {
			clearProgress(g)
			fmt.Fprintf(g.stderr, "execgate: replay: %s\n", display.Escape(p.String()))
		}}
	if isTerminal(g.stderr) {
		o.Progress = func(p replay.Progress) { showProgress(g, p) }
	}
	var enc *json.Encoder
	if f.jsonl {
		enc = json.NewEncoder(g.stdout)
		enc.SetEscapeHTML(false)
		o.Each = func(c replay.Command, v replay.Verdict) error { return enc.Encode(commandJSON(c, v)) }
	}
	report, err := replay.Run(ctx, o)
	if err != nil {
		return err
	}
	switch {
	case f.jsonl:
		return nil
	case f.json:
		out := json.NewEncoder(g.stdout)
		out.SetEscapeHTML(false)
		out.SetIndent("", "  ")
		return out.Encode(report)
	}
	return report.WriteText(g.stdout)
}

// newReplayJudge judges as `execgate check` and the shim do: the
// configuration file, the rules, each agent's policy with the session's
// override, the user's environment. A configuration that exists but
// cannot be used refuses every command, as the shim would.
func newReplayJudge(ctx context.Context, g *globals) (*replay.Judge, error) {
	path := configPath(g)
	cfg, _, warnings, err := config.Load(path)
	refusal := ""
	if err != nil {
		refusal = unusableLine(g, err).Error()
		fmt.Fprintln(g.stderr, refusal)
	}
	for _, w := range warnings {
		fmt.Fprintf(g.stderr, "execgate: warning: %s: %s\n", path, w)
	}
	engine, err := policy.NewEngine()
	if err != nil {
		return nil, err
	}
	home := g.getenv("HOME")
	own := policy.OwnFiles(path)
	return &replay.Judge{
		Confine: probeSandbox(g.getenv).Supported(),
		Engine:  engine,
		Trust:   policy.NewTrust(cfg, home, g.getenv),
		Agent: func(transcript string) string {
			if transcript == "" || g.agent != "" {
				// --agent judges everything under one policy; a format
				// that belongs to no agent ($EXECGATE_AGENT, else the
				// default) — never the agent this replay runs under.
				return config.DetectAgent(g.agent, g.getenv, nil)
			}
			return transcript
		},
		Request: func(agent string) policy.Request {
			req := policy.NewRequest(cfg, agent, "", home, own)
			req.Getenv = g.getenv
			var notes []string
			req.Policy, notes = shim.SessionPolicy(ctx, cfg, g.getenv, agent, req.Policy)
			for _, n := range notes {
				fmt.Fprintf(g.stderr, "execgate: %s: %s\n", agent, n)
			}
			return req
		},
		Hosts: func(agent string) []string {
			if cfg == nil {
				return nil // unusable: everything is refused
			}
			return cfg.SandboxFor(agent, home).Hosts
		},
		Refusal: refusal,
	}, nil
}

// replayCommandJSON is one line of --jsonl.
type replayCommandJSON struct {
	Command  string   `json:"command"`
	Agent    string   `json:"agent"`
	Session  string   `json:"session"`
	Time     string   `json:"time,omitempty"`
	Cwd      string   `json:"cwd"`
	Unknown  string   `json:"unknownDirectory,omitempty"`
	Where    string   `json:"where"`
	Risk     string   `json:"risk"`
	Decision string   `json:"decision"`
	Rules    []string `json:"rules"`
	Reasons  []string `json:"reasons"`
}

func commandJSON(c replay.Command, v replay.Verdict) replayCommandJSON {
	out := replayCommandJSON{Command: c.Text, Agent: v.Agent, Session: c.Session, Cwd: c.Cwd, Unknown: v.Unknown,
		Where: c.Where(), Risk: v.Risk.String(), Decision: string(v.Decision), Rules: []string{}, Reasons: nonNil(v.Reasons)}
	if !c.Time.IsZero() {
		out.Time = c.Time.UTC().Format("2006-01-02T15:04:05.000Z")
	}
	for _, s := range v.Segments {
		for _, r := range s.Reasons {
			if r.Rule != "" && !slices.Contains(out.Rules, r.Rule) {
				out.Rules = append(out.Rules, r.Rule)
			}
		}
	}
	return out
}

func isTerminal(w any) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// showProgress rewrites one line on stderr: it is a terminal.
func showProgress(g *globals, p replay.Progress) {
	if p.Done {
		clearProgress(g)
		return
	}
	fmt.Fprintf(g.stderr, "\r\x1b[Kexecgate: replay: %d commands from %d transcripts, %d would ask", p.Commands, p.Files, p.Asks)
}

func clearProgress(g *globals) {
	if isTerminal(g.stderr) {
		fmt.Fprint(g.stderr, "\r\x1b[K")
	}
}
