// Package doctor proves that execgate's gate fires where the user wired it:
// for each agent it runs the hook command and the shell the agent's settings
// name with a probe in that agent's exact protocol, and reports the agent
// live, registered but not firing, or absent — with the fix. It also checks
// the binary, the shims, the configuration, the hub and Codex's hook trust.
//
// The probe is harmless whatever answers it: the command `true`, judged
// under EXECGATE_SECURITY=deny (an environment override that can only
// tighten), so execgate must refuse it and anything else would just run
// `true`. A gate that is configured but silent is the failure this package
// exists to find: a peer's shim once sat "configured" for weeks while the
// agent ran /bin/bash directly.
package doctor

import (
	"bytes"
	"context"
	"debug/buildinfo"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"time"

	"mvdan.cc/sh/v3/shell"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/hookproto"
	"github.com/execgate/execgate/setup"
	"github.com/execgate/execgate/shim"
)

// Status grades a check.
type Status int

const (
	OK   Status = iota // works
	Info               // nothing wrong; worth knowing
	Warn               // works, but something deserves a look
	Fail               // configured and not working: doctor exits non-zero
)

func (s Status) String() string {
	return [...]string{"ok", "info", "warn", "FAIL"}[s]
}

// Check is one finding.
type Check struct {
	Status Status
	// Area is what was checked: "binary", "shims", "config", "hub", or an
	// agent's name.
	Area string
	// Text says what was found, Fix what to do about it ("" when nothing).
	Text, Fix string
}

// Options say where everything is.
type Options struct {
	// Setup locates the binary, the shims, the home and state directories
	// and the agents' settings files, as `execgate setup` does.
	Setup setup.Options
	// ConfigPath is execgate's configuration file.
	ConfigPath string
	// Environ is the environment the probes run in (with execgate's own
	// variables replaced); nil means os.Environ().
	Environ []string
	// Hub reports the number of approvers connected, or why there is no
	// hub; nil skips the check.
	Hub func(ctx context.Context) (approvers int, err error)
	// AuditPath is the audit log, whose lost events doctor counts; ""
	// skips the check.
	AuditPath string
	// Timeout bounds each probe; 0 means 2 s.
	Timeout time.Duration
	// SandboxHelper is the program that makes a confined command's
	// private loopback network for a user who is not root
	// (sandbox.Options.Helper); "" checks without one.
	SandboxHelper string
}

// probe is the command every probe asks to run.
const probe = "true"

// Run runs every check.
func Run(ctx context.Context, o Options) []Check {
	if o.Timeout <= 0 {
		o.Timeout = 2 * time.Second
	}
	if o.Environ == nil {
		o.Environ = os.Environ()
	}
	var out []Check
	out = append(out, o.binary()...)
	out = append(out, o.config())
	out = append(out, o.sandbox())
	if c, ok := o.loopback(); ok {
		out = append(out, c)
	}
	if c, ok := o.leftovers(); ok {
		out = append(out, c)
	}
	if o.AuditPath != "" {
		out = append(out, o.audit())
	}
	if o.Hub != nil {
		out = append(out, o.hub(ctx))
	}
	wired, err := setup.Wiring(o.Setup)
	if err != nil {
		return append(out, Check{Status: Fail, Area: "agents", Text: err.Error()})
	}
	for _, w := range wired {
		out = append(out, o.agent(ctx, w))
	}
	return out
}

// Failed reports whether any check failed.
func Failed(checks []Check) bool {
	return slices.ContainsFunc(checks, func(c Check) bool { return c.Status == Fail })
}

func (o Options) binary() []Check {
	exe := o.Setup.Exe
	checks := []Check{{Status: OK, Area: "binary", Text: homeRel(o.Setup.Home, exe)}}
	shims := o.Setup.Shims
	if shims == "" {
		shims = setup.ShimDir(exe)
	}
	shellBin := filepath.Join(filepath.Dir(exe), "execgate-shell")
	var missing, foreign, viaCLI []string
	for _, name := range []string{"bash", "sh", "zsh"} {
		link := filepath.Join(shims, name)
		target, err := filepath.EvalSymlinks(link)
		switch {
		case err != nil:
			missing = append(missing, link)
		case target == exe:
			viaCLI = append(viaCLI, link)
		case target != shellBin:
			foreign = append(foreign, fmt.Sprintf("%s runs %s", link, target))
		}
	}
	if _, err := os.Stat(shellBin); err == nil {
		if why := sameBuild(exe, shellBin); why != "" {
			checks = append(checks, Check{Status: Fail, Area: "binary", Text: homeRel(o.Setup.Home, shellBin) + " is not the same build as " + homeRel(o.Setup.Home, exe) + ": " + why,
				Fix: "run ./install.sh again: it builds both from one tree"})
		}
	}
	switch {
	case len(foreign) > 0:
		checks = append(checks, Check{Status: Fail, Area: "shims", Text: strings.Join(foreign, "; ") + ", not this execgate",
			Fix: "run ./install.sh again to link the shims to this binary"})
	case len(missing) > 0:
		checks = append(checks, Check{Status: Warn, Area: "shims", Text: "missing: " + strings.Join(missing, ", "),
			Fix: "run ./install.sh to make them (the shim route needs them)"})
	case len(viaCLI) > 0:
		checks = append(checks, Check{Status: Info, Area: "shims", Text: strings.Join(viaCLI, ", ") + " run execgate itself, which works but starts slower than execgate-shell",
			Fix: "run ./install.sh again to link them to execgate-shell"})
	default:
		checks = append(checks, Check{Status: OK, Area: "shims", Text: homeRel(o.Setup.Home, shims) + "/{bash,sh,zsh} → " + homeRel(o.Setup.Home, shellBin)})
	}
	return checks
}

// sameBuild says how the binaries a and b differ in what they record of
// their build (Go version, module version, source revision), or "" when
// they agree.
func sameBuild(a, b string) string {
	ia, err := buildinfo.ReadFile(a)
	if err != nil {
		return "cannot read " + a + "'s build information: " + err.Error()
	}
	ib, err := buildinfo.ReadFile(b)
	if err != nil {
		return "cannot read " + b + "'s build information: " + err.Error()
	}
	if ia.GoVersion != ib.GoVersion {
		return fmt.Sprintf("built with %s and %s", ia.GoVersion, ib.GoVersion)
	}
	if ia.Main.Version != ib.Main.Version {
		return fmt.Sprintf("versions %s and %s", ia.Main.Version, ib.Main.Version)
	}
	for _, key := range []string{"vcs.revision", "vcs.time", "vcs.modified"} {
		if va, vb := buildSetting(ia, key), buildSetting(ib, key); va != vb {
			return fmt.Sprintf("%s %q and %q", key, va, vb)
		}
	}
	return ""
}

// buildSetting returns one setting of a build, or "".
func buildSetting(info *debug.BuildInfo, key string) string {
	for _, s := range info.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

func (o Options) config() Check {
	_, hash, warnings, err := config.Load(o.ConfigPath)
	exists := hash != "" // Load hashes a file it read; none when there is none
	switch {
	case err != nil:
		line := err.Error()
		if u, ok := config.AsUnusable(err); ok {
			line = u.Refusal(o.Setup.Home)
		}
		return Check{Status: Fail, Area: "config", Text: line, Fix: "execgate config check; execgate config edit"}
	case !exists:
		return Check{Status: Info, Area: "config", Text: homeRel(o.Setup.Home, o.ConfigPath) + " does not exist: the built-in defaults apply"}
	case len(warnings) > 0:
		return Check{Status: Warn, Area: "config", Text: fmt.Sprintf("%s: %s (%d warning(s) in all)", homeRel(o.Setup.Home, o.ConfigPath), warnings[0], len(warnings)),
			Fix: "execgate config check lists them"}
	}
	return Check{Status: OK, Area: "config", Text: homeRel(o.Setup.Home, o.ConfigPath)}
}

// audit reports events the shims could not write to the audit log.
func (o Options) audit() Check {
	log := shim.AuditLog{Path: o.AuditPath}
	c, err := log.Failures()
	switch {
	case err != nil:
		return Check{Status: Warn, Area: "audit", Text: err.Error()}
	case c.Count > 0:
		return Check{Status: Warn, Area: "audit", Text: fmt.Sprintf("%d events could not be written to %s (the disk was full or the file not writable), the last at %s",
			c.Count, homeRel(o.Setup.Home, o.AuditPath), c.Last.Local().Format("2006-01-02 15:04:05")),
			Fix: "free space or fix the file's permissions; execgate log shows what was kept"}
	}
	return Check{Status: OK, Area: "audit", Text: homeRel(o.Setup.Home, o.AuditPath)}
}

func (o Options) hub(ctx context.Context) Check {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	n, err := o.Hub(ctx)
	if err != nil {
		return Check{Status: Info, Area: "hub", Text: strings.TrimPrefix(err.Error(), "hub: ") + "; a command that needs a person gets askFallback when no terminal prompt can ask",
			Fix: "execgate hub --detach, then execgate approve (or execgate web)"}
	}
	if n == 0 {
		return Check{Status: Info, Area: "hub", Text: "running, no approver connected", Fix: "execgate approve (or execgate web)"}
	}
	return Check{Status: OK, Area: "hub", Text: fmt.Sprintf("running, %d approver(s) connected", n)}
}

// agent checks one agent's routes.
func (o Options) agent(ctx context.Context, w setup.Wired) Check {
	c := Check{Area: w.Agent}
	where := homeRel(o.Setup.Home, w.Settings)
	if w.Err != nil {
		c.Status, c.Text = Fail, fmt.Sprintf("%s cannot be read: %v", where, w.Err)
		c.Fix = "fix the file, then execgate doctor again"
		return c
	}
	var live, silent []string
	var fixes []string
	for _, h := range w.Hooks {
		if !o.names(h.Command) {
			continue // someone else's hook: not run
		}
		ok, why := o.hookFires(ctx, w, h)
		desc := fmt.Sprintf("hook `%s` in %s", h.Command, where)
		if !ok {
			silent = append(silent, desc+": "+why)
			fixes = append(fixes, "execgate setup "+w.Agent+hookFlag(w.Agent)+" --apply")
			continue
		}
		if w.Agent == "codex" {
			if trusted, why := codexTrusted(o.Setup, w, h); !trusted {
				silent = append(silent, desc+": "+why)
				fixes = append(fixes, "open Codex and trust it with /hooks (codex exec never asks; it skips untrusted hooks)")
				continue
			}
		}
		live = append(live, desc)
	}
	if w.Shell != "" {
		desc := fmt.Sprintf("CLAUDE_CODE_SHELL=%s in %s", w.Shell, where)
		if ok, why := o.shellFires(ctx, w.Shell); ok {
			live = append(live, desc)
		} else if o.names(w.Shell) || strings.Contains(w.Shell, "execgate") {
			silent = append(silent, desc+": "+why)
			fixes = append(fixes, "run ./install.sh, then execgate setup claude --apply")
		} else {
			silent = append(silent, desc+": "+why+" (not execgate's shim)")
			fixes = append(fixes, "execgate setup claude --apply")
		}
	}
	switch {
	case len(silent) > 0:
		c.Status = Fail
		c.Text = "registered but not firing: " + strings.Join(silent, "; ")
		if len(live) > 0 {
			c.Text += " (live: " + strings.Join(live, "; ") + ")"
		}
		slices.Sort(fixes)
		c.Fix = strings.Join(slices.Compact(fixes), "; ")
	case len(live) > 0:
		c.Status, c.Text = OK, "live: "+strings.Join(live, "; ")
	default:
		c.Status = Info
		c.Text = "absent: " + w.Title + " runs commands without execgate"
		if !w.Exists {
			c.Text += " (no " + where + ")"
		}
		c.Fix = "execgate setup " + w.Agent + " shows how; --apply wires it"
	}
	return c
}

func hookFlag(agent string) string {
	if agent == "claude" {
		return " --hook"
	}
	return ""
}

// names reports whether a command line runs this execgate (or its shims).
func (o Options) names(command string) bool {
	return strings.Contains(command, o.Setup.Exe) || strings.Contains(command, "execgate")
}

// hookFires runs one hook command as the agent would, with the agent's
// probe input, and reports whether it refused.
func (o Options) hookFires(ctx context.Context, w setup.Wired, h setup.HookCommand) (bool, string) {
	p, ok := hookproto.ByName(w.Agent)
	if !ok {
		return false, "no protocol for " + w.Agent
	}
	if missing := missingProgram(h.Command); missing != "" {
		return false, missing + " does not exist"
	}
	cwd := o.Setup.Home
	if cwd == "" || !filepath.IsAbs(cwd) {
		cwd = "/"
	}
	ans, err := o.runProbe(ctx, []string{"/bin/sh", "-c", h.Command}, p.Input(probe, cwd), nil)
	if err != nil {
		return false, err.Error()
	}
	v := p.Parse(ans)
	if v.Decision != hookproto.Deny {
		return false, fmt.Sprintf("it answered %s to a command it had to refuse (exit %d)", v.Decision, ans.Exit)
	}
	return true, ""
}

// shellFires runs the probe through shell as Claude Code would and reports
// whether execgate refused it.
func (o Options) shellFires(ctx context.Context, shellPath string) (bool, string) {
	if !filepath.IsAbs(shellPath) {
		return false, "not an absolute path"
	}
	if _, err := os.Stat(shellPath); err != nil {
		return false, shellPath + " does not exist"
	}
	ans, err := o.runProbe(ctx, []string{shellPath, "-c", probe}, nil, []string{"CLAUDECODE=1"})
	if err != nil {
		return false, err.Error()
	}
	if ans.Exit == 126 && strings.HasPrefix(ans.Stderr, "execgate: denied") {
		return true, ""
	}
	return false, fmt.Sprintf("it ran a command it had to refuse (exit %d)", ans.Exit)
}

// runProbe runs argv with stdin under EXECGATE_SECURITY=deny, within the
// timeout, killing its whole process group when it runs over.
func (o Options) runProbe(ctx context.Context, argv []string, stdin []byte, env []string) (hookproto.Answer, error) {
	ctx, cancel := context.WithTimeout(ctx, o.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Env = append(probeEnviron(o.Environ), env...)
	cmd.Env = append(cmd.Env, config.SecurityEnv+"="+string(config.SecurityDeny))
	cmd.Dir = "/"
	cmd.Stdin = bytes.NewReader(stdin)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() != nil {
		return hookproto.Answer{}, fmt.Errorf("no answer within %s", o.Timeout)
	}
	ans := hookproto.Answer{Stdout: stdout.String(), Stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		ans.Exit = ee.ExitCode()
	case err != nil:
		return hookproto.Answer{}, err
	}
	return ans, nil
}

// probeEnviron is environ without the variables that would change whom
// the probe speaks for or how strictly it is judged.
func probeEnviron(environ []string) []string {
	return slices.DeleteFunc(slices.Clone(environ), func(kv string) bool {
		name, _, _ := strings.Cut(kv, "=")
		return strings.HasPrefix(name, "EXECGATE_") && name != "EXECGATE_CONFIG" ||
			name == "CLAUDECODE" || name == "GEMINI_CLI" || strings.HasPrefix(name, "CODEX_") && name != "CODEX_HOME"
	})
}

// missingProgram returns the program a command line starts with when it
// is an absolute path that does not exist ("" otherwise): the settings name
// a binary that was removed or moved.
func missingProgram(command string) string {
	fields, err := shell.Fields(command, func(string) string { return "" })
	if err != nil || len(fields) == 0 || !filepath.IsAbs(fields[0]) {
		return ""
	}
	if _, err := os.Stat(fields[0]); err != nil {
		return fields[0]
	}
	return ""
}

func homeRel(home, path string) string {
	if rel, err := filepath.Rel(home, path); err == nil && home != "" && filepath.IsLocal(rel) {
		return filepath.Join("~", rel)
	}
	return path
}
