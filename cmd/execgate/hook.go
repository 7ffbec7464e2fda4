package main

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/execgate/execgate/hookproto"
	"github.com/execgate/execgate/internal/denial"
	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/shim"
)

// Time budget: the default is the agent's own hook timeout less
// hookMargin, and the context ends hookGrace after the budget, so that an
// answer always goes out before the agent gives up on the hook.
const (
	hookMargin = 5 * time.Second
	hookGrace  = 500 * time.Millisecond
)

// maxAskReason bounds the reason an agent's own prompt shows.
const maxAskReason = 1000

type hookFlags struct {
	timeout time.Duration
}

func newHookCmd(g *globals) *cobra.Command {
	var f hookFlags
	names := hookproto.Names()
	cmd := &cobra.Command{
		Use:   "hook claude|codex|gemini",
		Short: "Answer an agent's pre-tool hook: allow, deny or ask about a shell command",
		Long: `hook reads the pre-tool-use JSON an agent sends its hooks on stdin, judges
the shell command in it under the policy exactly as the shim would, and
answers in that agent's protocol: Claude Code's and Codex's PreToolUse,
Gemini CLI's BeforeTool. Other tools (file reads, edits) get no answer, so
the agent's normal permissions apply. Input that is not a well-formed
request is refused, never let through.

When the policy wants a person, only the hub's approvers are asked (run
"execgate hub" and "execgate approve"): the agent's interface owns the
terminal, and a prompt there would fight it for keystrokes. With no approver
connected, Claude Code is told to ask its user itself; Codex and Gemini CLI,
which cannot, get what askFallback says (deny by default).

For Claude Code and Codex, where the kernel sandbox works, a command that
fits it (or is proven safe) is allowed with the command rewritten
(updatedInput) to run through execgate's shim, which runs it confined.

Approvers get --timeout to answer, by default the agent's own hook timeout
less 5s, and the answer goes out at most half a second after it. If the
agent's settings give the hook a shorter timeout, pass a shorter --timeout
too: an agent that gives up on a hook runs the command.

The policy is the agent's (claude-code, codex, gemini-cli) unless --agent
or $EXECGATE_AGENT names another.`,
		Example: `  # ~/.claude/settings.json and ~/.codex/hooks.json
  {"hooks": {"PreToolUse": [{"matcher": "Bash",
    "hooks": [{"type": "command", "command": "execgate hook claude"}]}]}}
  # ~/.gemini/settings.json
  {"hooks": {"BeforeTool": [{"matcher": "run_shell_command",
    "hooks": [{"type": "command", "command": "execgate hook gemini"}]}]}}`,
		ValidArgs: names,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 {
				return usagef("hook needs one agent: %s", strings.Join(names, ", "))
			}
			if _, ok := hookproto.ByName(args[0]); !ok {
				return usagef("hook: unknown agent %q (want %s)", args[0], strings.Join(names, ", "))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			p, _ := hookproto.ByName(args[0])
			return runHook(g, p, f)
		},
	}
	cmd.Flags().DurationVar(&f.timeout, "timeout", 0, "give approvers `DURATION` to answer (default: the agent's hook timeout less 5s: claude and codex 9m55s, gemini 55s)")
	return cmd
}

// runHook answers one hook invocation. Its exit status is part of the
// answer: a usage error exits 2 (exitUsage), which every agent reads as a
// refusal (hookproto.ExitBlock).
func runHook(g *globals, p hookproto.Protocol, f hookFlags) (err error) {
	budget := p.Timeout - hookMargin
	if f.timeout < 0 {
		return usagef("--timeout %s: want a positive duration", f.timeout)
	}
	if f.timeout > 0 {
		budget = f.timeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), budget+hookGrace)
	defer cancel()
	agentID := cmp.Or(g.agent, g.getenv("EXECGATE_AGENT"), p.Agent)
	getenv := func(k string) string {
		if k == "EXECGATE_CONFIG" {
			return configPath(g) // --config reaches the shim's loader
		}
		return g.getenv(k)
	}

	var v hookproto.Verdict
	defer func() {
		// A bug must still end in a refusal the agent understands.
		if r := recover(); r != nil {
			v = hookproto.Verdict{Decision: hookproto.Deny, Reason: denial.Errorf("internal error: %v", r).Error()}
		}
		if code := hookproto.Write(g.stdout, g.stderr, p.Encode(v)); code != 0 {
			err = exitCodeError{code}
		}
	}()
	raw, err := hookproto.ReadInput(ctx, g.stdin)
	if err == nil {
		v, err = p.Answer(raw, func(req hookproto.Request) hookproto.Verdict {
			rw := newHookRewrite(p, req, getenv, agentID, configPath(g))
			return judgeHook(ctx, p, req, budget, shim.JudgeOptions{Agent: agentID, Getenv: getenv, Stderr: stderrFile(g)}, rw)
		})
	}
	if err != nil {
		// Judge never saw it: the refusal is logged here.
		reason := err.Error()
		v = hookproto.Verdict{Decision: hookproto.Deny, Reason: denial.Line(reason)}
		shim.Refuse(shim.JudgeOptions{Agent: agentID, Via: p.Via, Source: "hook", Getenv: getenv, Stderr: stderrFile(g)}, "", reason)
	}
	slog.Debug("hook", "agent", p.Name, "decision", v.Decision, "reason", v.Reason)
	return nil
}

func stderrFile(g *globals) *os.File {
	f, _ := g.stderr.(*os.File)
	return f
}

// judgeHook decides on a well-formed shell command with shim.Judge, asking
// only the hub's approvers, and turns the judgement into a verdict. With
// rw, a command allowed on the condition that it runs confined is
// rewritten to run through the shim (hook_confine.go).
func judgeHook(ctx context.Context, p hookproto.Protocol, req hookproto.Request, budget time.Duration, o shim.JudgeOptions, rw *hookRewrite) hookproto.Verdict {
	o.Command, o.Cwd, o.Workspace, o.Via, o.Source, o.Timeout = req.Command, req.Cwd, req.Workspace, p.Via, "hook", budget
	o.Asker = nil // the hub only: see the command's help
	o.Defer = p.Defers(req)
	o.Confinable = rw != nil
	j := shim.Judge(ctx, o)
	switch {
	case j.Allow && j.Confined && rw != nil:
		return rw.verdict(req)
	case j.Unanswered && o.Defer:
		// The agent's own prompt reaches the person execgate could not:
		// better than applying askFallback on their behalf.
		return hookproto.Verdict{Decision: hookproto.Ask, Reason: "execgate: needs approval: " + display.Line(firstReason(j.Reasons), maxAskReason)}
	case j.Allow:
		return hookproto.Verdict{Decision: hookproto.Allow, Reason: allowReason(j)}
	case ctx.Err() != nil && !j.TimedOut:
		return hookproto.Verdict{Decision: hookproto.Deny, Reason: denial.Errorf("approval timed out: no answer within the hook's time budget (%s)", budget).Error()}
	}
	// Judge's message is already one refusal line (package denial).
	msg := j.Message
	if msg == "" {
		msg = denial.Line("the command was not allowed")
	}
	return hookproto.Verdict{Decision: hookproto.Deny, Reason: msg}
}

func firstReason(reasons []string) string {
	switch len(reasons) {
	case 0:
		return "the policy asks for approval"
	case 1:
		return reasons[0]
	}
	return fmt.Sprintf("%s (and %d more)", reasons[0], len(reasons)-1)
}

// allowReason says who let the command through; Claude Code shows it to
// the user.
func allowReason(j shim.Judgement) string {
	switch {
	case j.DecidedBy == shim.ByHub:
		return "execgate: approved by a person (hub)"
	case j.TimedOut:
		return "execgate: approval timed out; allowed by askFallback"
	case j.DecidedBy == shim.ByFallback:
		return "execgate: nobody to ask; allowed by askFallback"
	}
	return "execgate: allowed by policy"
}
