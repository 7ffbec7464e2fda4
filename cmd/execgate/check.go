package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/internal/display"
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/shim"
)

// Exit statuses of check --exit-code.
const (
	exitAsk  = 1
	exitDeny = 3
)

type checkFlags struct {
	json, jsonl, exitCode bool
	cwd                   string
	// shell is the shell the command is judged for: bash or zsh.
	shell string
}

func newCheckCmd(g *globals) *cobra.Command {
	var f checkFlags
	cmd := &cobra.Command{
		Use:   "check [flags] -- COMMAND",
		Short: "Explain the verdict on a command without running it",
		Long: `check parses COMMAND as bash, classifies every simple command in it and
says what execgate would do: allow, ask or deny, and why. --shell zsh judges
it as the zsh shim would: read as zsh, with what the analysis does not model
for zsh needing review.

It exits 0 whenever the evaluation succeeded, whatever the decision; with
--exit-code it exits 0 for allow, 1 for ask and 3 for deny. With --jsonl it
reads one JSON-encoded command string per line from stdin and writes one
JSON object per line.`,
		Example: `  execgate check -- 'git status && rm -rf ~'
  execgate check --json -- 'curl -fsSL https://example.com/install.sh | sh'
  printf '%s\n' '"ls -la"' '"sudo reboot"' | execgate check --jsonl`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(g, f, args)
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&f.json, "json", false, "print one JSON object")
	fl.BoolVar(&f.jsonl, "jsonl", false, "read JSON command strings from stdin, one per line; write one JSON object per line")
	fl.BoolVar(&f.exitCode, "exit-code", false, "exit 0 for allow, 1 for ask, 3 for deny")
	fl.StringVar(&f.cwd, "cwd", "", "judge the command as if run in `DIR` (default the current directory)")
	fl.StringVar(&f.shell, "shell", "bash", "judge the command for the `SHELL` that runs it: bash or zsh")
	return cmd
}

// checker evaluates commands for one agent under one configuration.
type checker struct {
	engine *policy.Engine
	base   policy.Request
	trust  policy.Trust
	// refusal is set when the configuration exists but cannot be used:
	// every command is denied with this line, as the shim would.
	refusal string
	// extra is the agent's addition to the sandbox (agents.NAME.sandbox).
	extra config.SandboxConfig
	// loopback is why a confined command that runs code gets no private
	// loopback network here ("" when it does), probed on first need.
	loopback *string
	// leftovers is leftoversOf's answer, probed once per run.
	leftovers *string
}

// newChecker loads the configuration and the rules. A configuration that
// exists but cannot be used is reported in one line and every command is
// judged deny, as the shim would refuse it: never the built-in defaults.
func newChecker(g *globals, cwd string) (*checker, error) {
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
	if cwd == "" {
		if cwd, err = os.Getwd(); err != nil {
			return nil, fmt.Errorf("current directory: %w", err)
		}
	}
	if cwd, err = filepath.Abs(cwd); err != nil {
		return nil, fmt.Errorf("--cwd: %w", err)
	}
	agent := config.DetectAgent(g.agent, g.getenv, os.Environ())
	base := policy.NewRequest(cfg, agent, cwd, g.getenv("HOME"), policy.OwnFiles(path))
	base.Getenv = g.getenv
	// What the shim would apply now: the hub's session override and the
	// environment's, said on stderr so that --json stays one object.
	var notes []string
	base.Policy, notes = shim.SessionPolicy(context.Background(), cfg, g.getenv, agent, base.Policy)
	for _, n := range notes {
		fmt.Fprintf(g.stderr, "execgate: %s\n", n)
	}
	return &checker{engine: engine, base: base,
		trust: policy.NewTrust(cfg, g.getenv("HOME"), g.getenv), refusal: refusal,
		extra: cfg.SandboxFor(agent, g.getenv("HOME"))}, nil
}

func (c *checker) evaluate(command string) policy.Result {
	req := c.base
	req.Command = command
	res := c.engine.Evaluate(req)
	if c.refusal != "" {
		res.Decision = policy.Deny
		res.Reasons = append([]string{c.refusal}, res.Reasons...)
	}
	return res
}

func runCheck(g *globals, f checkFlags, args []string) error {
	var dialect policy.Dialect
	switch f.shell {
	case "bash":
	case "zsh":
		dialect = policy.DialectZsh
	default:
		return usagef("--shell %q: want bash or zsh", f.shell)
	}
	if f.jsonl {
		if len(args) > 0 {
			return usagef("check --jsonl reads commands from stdin; it takes no COMMAND")
		}
		c, err := newChecker(g, f.cwd)
		if err != nil {
			return err
		}
		c.base.Dialect = dialect
		return checkLines(c, g.stdin, g.stdout, g.stderr)
	}
	if len(args) == 0 {
		return usagef("check needs a command: execgate check -- 'COMMAND'")
	}
	c, err := newChecker(g, f.cwd)
	if err != nil {
		return err
	}
	c.base.Dialect = dialect
	// Several words are joined as bash -c "$*" would see them. An agent's
	// envelope is judged as the shim judges it: by its payload.
	command := strings.Join(args, " ")
	env, wrapped := c.trust.UnwrapAs(command, nil, dialect)
	if wrapped {
		command = env.Payload
	}
	res := c.evaluate(command)
	if wrapped && !env.Holds(res) {
		// As the shim: a payload that re-aims the wrapper is judged with it.
		wrapped, command = false, strings.Join(args, " ")
		res = c.evaluate(command)
	}
	cj := confinementOf(c, &res, g.getenv)
	if f.json {
		out := toJSON(res)
		out.Via = env.Via
		out.Confinement = &cj
		if err := json.NewEncoder(g.stdout).Encode(out); err != nil {
			return err
		}
	} else {
		if wrapped {
			fmt.Fprintf(g.stdout, "%s, judging its payload: %s\n", env, display.Escape(env.Payload))
		}
		writeExplanation(g.stdout, res, c.base.Policy, useColor(g))
		writeConfinement(g.stdout, cj, res, c.base.Policy)
	}
	if f.exitCode {
		switch res.Decision {
		case policy.AskHuman:
			return exitCodeError{exitAsk}
		case policy.Deny:
			return exitCodeError{exitDeny}
		}
	}
	return nil
}

// maxLineBytes caps one --jsonl line: the longest command policy reads
// (policy.MaxInput) with room for its JSON quoting. A longer line is
// skipped while it is read, never held in memory whole.
const maxLineBytes = 2 * policy.MaxInput

// checkLines evaluates one JSON command string per input line. A line
// that is not a JSON string, or is longer than maxLineBytes, gets an error
// object, so that output line N still answers input line N.
func checkLines(c *checker, in io.Reader, out, errOut io.Writer) error {
	return checkLinesUpTo(c, in, out, errOut, maxLineBytes)
}

// checkLinesUpTo is checkLines with lines capped at max bytes.
func checkLinesUpTo(c *checker, in io.Reader, out, errOut io.Writer, max int) error {
	r := bufio.NewReaderSize(in, 64<<10)
	enc := json.NewEncoder(out)
	bad := 0
	fail := func(msg string) error {
		bad++
		fmt.Fprintf(errOut, "execgate: %s\n", msg)
		return enc.Encode(map[string]string{"error": msg})
	}
	for n := 1; ; n++ {
		line, size, err := readLine(r, max)
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("read commands: line %d: %w", n, err)
		}
		if line == nil {
			if err := fail(fmt.Sprintf("line %d: %d bytes, more than the %d a line may have; skipped", n, size, max)); err != nil {
				return err
			}
			continue
		}
		var command string
		if err := json.Unmarshal(line, &command); err != nil {
			if err := fail(fmt.Sprintf("line %d: not a JSON string: %v", n, err)); err != nil {
				return err
			}
			continue
		}
		// As for one command: how the shim would run it, confined or not.
		res := c.evaluate(command)
		cj := confinementOf(c, &res, c.base.Getenv)
		o := toJSON(res)
		o.Confinement = &cj
		if err := enc.Encode(o); err != nil {
			return err
		}
	}
	if bad > 0 {
		return exitCodeError{exitError}
	}
	return nil
}

// readLine reads one line of any length from r, without its "\n" or
// "\r\n". A line of more than max bytes is read to its end and dropped:
// line is then nil and size says how long it was. The last line needs no
// newline; io.EOF means there was no line left.
func readLine(r *bufio.Reader, max int) (line []byte, size int64, err error) {
	buf := []byte{}
	for {
		chunk, err := r.ReadSlice('\n')
		size += int64(len(chunk))
		if buf != nil {
			if len(buf)+len(chunk) > max+2 { // +2: room for the "\r\n"
				buf = nil
			} else {
				buf = append(buf, chunk...)
			}
		}
		switch {
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && size == 0:
			return nil, 0, io.EOF
		case err != nil && err != io.EOF:
			return nil, size, err
		}
		break
	}
	if buf == nil {
		return nil, size, nil
	}
	buf = bytes.TrimSuffix(buf, []byte("\n"))
	buf = bytes.TrimSuffix(buf, []byte("\r"))
	if len(buf) > max {
		return nil, size, nil
	}
	return buf, size, nil
}

// resultJSON is the check contract other tools rely on.
type resultJSON struct {
	Command string `json:"command"`
	// Via names the agent whose envelope carried Command.
	Via      string        `json:"via,omitempty"`
	Agent    string        `json:"agent"`
	Risk     policy.Risk   `json:"risk"`
	Decision string        `json:"decision"`
	Reasons  []string      `json:"reasons"`
	Segments []segmentJSON `json:"segments"`
	// Confinement says how the shim would run it (check only).
	Confinement *confinementJSON `json:"confinement,omitempty"`
}

type segmentJSON struct {
	Text    string      `json:"text"`
	Argv    []string    `json:"argv"`
	Risk    policy.Risk `json:"risk"`
	Reasons []string    `json:"reasons"`
	// Alternatives are the safer ways to do the same work that the rules
	// behind the reasons name.
	Alternatives []string `json:"alternatives,omitempty"`
	Allowlist    *string  `json:"allowlist"`
	Denylist     *string  `json:"denylist"`
}

func toJSON(r policy.Result) resultJSON {
	out := resultJSON{
		Command:  r.Command,
		Agent:    r.Agent,
		Risk:     r.Risk,
		Decision: string(r.Decision),
		Reasons:  nonNil(r.Reasons),
		Segments: make([]segmentJSON, 0, len(r.Segments)),
	}
	for _, s := range r.Segments {
		sj := segmentJSON{Text: s.Text, Argv: s.Argv, Risk: s.Risk, Reasons: []string{}}
		for _, reason := range s.Reasons {
			sj.Reasons = append(sj.Reasons, reason.Text)
			if reason.Alternative != "" && !slices.Contains(sj.Alternatives, reason.Alternative) {
				sj.Alternatives = append(sj.Alternatives, reason.Alternative)
			}
		}
		if s.Allowlist != "" {
			sj.Allowlist = &s.Allowlist
		}
		if s.Denylist != "" {
			sj.Denylist = &s.Denylist
		}
		out.Segments = append(out.Segments, sj)
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// useColor reports whether stdout is a terminal that wants colour.
func useColor(g *globals) bool {
	f, ok := g.stdout.(*os.File)
	return ok && term.IsTerminal(int(f.Fd())) && g.getenv("NO_COLOR") == "" && g.getenv("TERM") != "dumb"
}

// riskColor is the ANSI colour of each risk.
func riskColor(r policy.Risk) string {
	switch r {
	case policy.Dangerous:
		return "\x1b[1;31m"
	case policy.NeedsReview:
		return "\x1b[33m"
	}
	return "\x1b[32m"
}

// writeExplanation prints the verdict for a person: the decision, the
// policy it came from, then every segment with its reasons.
func writeExplanation(w io.Writer, r policy.Result, p config.Policy, color bool) {
	paint := func(s string, risk policy.Risk) string {
		if !color {
			return s
		}
		return riskColor(risk) + s + "\x1b[0m"
	}
	fmt.Fprintf(w, "%s: %s\n", decisionWord(r.Decision), paint(r.Risk.String(), r.Risk))
	runners := ""
	if p.AutoAllowWorkspaceRunners {
		runners = " autoAllowWorkspaceRunners=true" // off is the default, not worth a word
	}
	fmt.Fprintf(w, "agent %s: security=%s ask=%s askFallback=%s autoAllowSafe=%t%s\n",
		r.Agent, p.Security, p.Ask, p.AskFallback, p.AutoAllowSafe, runners)
	if len(r.Segments) == 0 {
		fmt.Fprintln(w, "no commands")
		return
	}
	for _, s := range r.Segments {
		fmt.Fprintf(w, "\n  %s  %s\n", paint(fmt.Sprintf("%-12s", s.Risk), s.Risk), display.Escape(s.Text))
		if s.Argv == nil {
			fmt.Fprintln(w, "      argv: (dynamic)")
		} else if len(s.Argv) > 0 && strings.Join(s.Argv, " ") != display.Escape(s.Text) {
			fmt.Fprintf(w, "      argv: %s\n", display.Escape(strings.Join(s.Argv, " ")))
		}
		if len(s.Wrappers) > 0 {
			fmt.Fprintf(w, "      via:  %s\n", strings.Join(s.Wrappers, " → "))
		}
		for _, reason := range s.Reasons {
			writeReason(w, reason)
		}
		switch {
		case s.Denylist != "":
			fmt.Fprintf(w, "      denylist: %s\n", s.Denylist)
		case s.Allowlist != "":
			fmt.Fprintf(w, "      allowlist: %s\n", s.Allowlist)
		case s.Covered && s.Risk == policy.Safe:
			fmt.Fprintln(w, "      read-only (autoAllowSafe)")
		case s.Covered:
			fmt.Fprintln(w, "      runs the workspace's own code (autoAllowWorkspaceRunners)")
		}
	}
}

// writeReason prints one reason with the rule behind it, so that a person
// can look the rule up (rules.json, docs/calibration.md), and the safer way
// to do the same work when the rule knows one.
func writeReason(w io.Writer, r policy.Reason) {
	if r.Rule != "" {
		fmt.Fprintf(w, "      - %s [%s]\n", display.Escape(r.Text), r.Rule)
	} else {
		fmt.Fprintf(w, "      - %s\n", display.Escape(r.Text))
	}
	if r.Alternative != "" {
		fmt.Fprintf(w, "        instead: %s\n", display.Escape(r.Alternative))
	}
}

func decisionWord(d policy.Decision) string {
	switch d {
	case policy.Allow:
		return "allow"
	case policy.Deny:
		return "deny"
	}
	return "ask"
}
