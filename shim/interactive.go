package shim

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	_ "embed"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/internal/self"
	"github.com/execgate/execgate/internal/state"
	"github.com/execgate/execgate/interp"
	"github.com/execgate/execgate/policy"
)

// gateScript is the bash half of the interactive gate; see gate.bash.
//
//go:embed gate.bash
var gateScript string

// gateProbeWait bounds the check of the real bash before the gate is used.
const gateProbeWait = 3 * time.Second

// An interactive shell reads its commands as they are typed, so the shim
// cannot judge its program ahead. Instead it starts the real bash with the
// gate: a start-up file of execgate's that runs the user's own start-up
// files, then installs a DEBUG trap that has `execgate gate` judge every
// command line before any of it runs (see gate.bash, and Gate for the
// judging). The shim only falls back to judging the shell as a whole, which
// needs review, when it cannot set the gate up.

// gateHook is how bash is made to read the gate file at start-up.
type gateHook string

const (
	// hookRCFile: --rcfile GATE, for an interactive bash that would read
	// ~/.bashrc (bash still reads its system bashrc first, as it would).
	hookRCFile gateHook = "rcfile"
	// hookEnv: ENV=GATE, for bash as sh or in POSIX mode, which read $ENV
	// and no bashrc.
	hookEnv gateHook = "env"
	// hookPrompt: --norc and PROMPT_COMMAND=". GATE", for a bash that
	// would read no bashrc: a login shell (whose profile the gate runs) or
	// one started with --norc. The gate is sourced before the first
	// prompt, and restores PROMPT_COMMAND.
	hookPrompt gateHook = "prompt"
)

// gateMode is one way bash may have been started, with what it would read
// at start-up (bash(1), INVOCATION) and how the gate gets in first.
type gateMode struct {
	sh, posix, login, norc, noprofile bool
	// startup are gate.bash's steps: "profile" (bash's login files),
	// "profile-sh" (/etc/profile and ~/.profile), "rc", "env".
	startup []string
	hook    gateHook
}

// gateModes lists the start-ups; the first whose flags all hold applies.
// sh is bash invoked as sh; posix is --posix or -o posix.
var gateModes = []struct {
	match func(m gateMode) bool
	mode  gateMode
}{
	{func(m gateMode) bool { return m.posix }, gateMode{startup: []string{"env"}, hook: hookEnv}},
	{func(m gateMode) bool { return m.sh && m.login && !m.noprofile }, gateMode{startup: []string{"profile-sh", "env"}, hook: hookEnv}},
	{func(m gateMode) bool { return m.sh }, gateMode{startup: []string{"env"}, hook: hookEnv}},
	{func(m gateMode) bool { return m.login && !m.noprofile }, gateMode{startup: []string{"profile"}, hook: hookPrompt}},
	{func(m gateMode) bool { return m.login }, gateMode{hook: hookPrompt}},
	{func(m gateMode) bool { return !m.norc }, gateMode{startup: []string{"rc"}, hook: hookRCFile}},
	{func(m gateMode) bool { return true }, gateMode{hook: hookPrompt}},
}

// gatePlan is how to start the real bash with the gate.
type gatePlan struct {
	argv []string
	// env holds the variables to set, "NAME=value"; drop names the ones
	// to remove from the caller's environment first.
	env  []string
	drop []string
	// rcfile is the --rcfile the caller gave, which runs unchecked.
	rcfile string
	mode   gateMode
}

// planGate rewrites bash's command line argv (argv[0] as bash will see it)
// for a gated interactive shell: not a login shell (the gate runs the login
// files instead: `shopt login_shell` reads off), -i, the hook, and every
// other option as given. gate is the gate file; environ is the caller's
// environment, for the variables the hook replaces.
func planGate(argv []string, gate string, environ []string) (gatePlan, error) {
	var p gatePlan
	var m gateMode
	name := argv[0]
	if strings.HasPrefix(name, "-") {
		m.login = true
		name = strings.TrimPrefix(name, "-")
	}
	m.sh = filepath.Base(name) == "sh"
	longs := []string{}
	i := 1
	for ; i < len(argv); i++ {
		a := argv[i]
		if len(a) < 3 || !strings.HasPrefix(a, "--") {
			break
		}
		switch a[2:] {
		case "login":
			m.login = true
		case "norc":
			m.norc = true
		case "noprofile":
			m.noprofile = true
		case "rcfile", "init-file":
			if i+1 >= len(argv) {
				return p, fmt.Errorf("%s: option requires an argument", a)
			}
			i++
			p.rcfile = argv[i]
		case "restricted":
			return p, errors.New("a restricted shell cannot run the gate's check (no command names with slashes)")
		case "posix":
			m.posix = true
			longs = append(longs, a)
		default:
			longs = append(longs, a)
		}
	}
	var shorts []string
	privileged := false
	for ; i < len(argv); i++ {
		a := argv[i]
		if a == "" || (a[0] != '-' && a[0] != '+') {
			break
		}
		if a == "-" || a == "--" {
			break // the rest, this word included, goes on as it is
		}
		sign, kept := a[0], []byte{a[0]}
		var value string
		for _, c := range a[1:] {
			switch c {
			case 'l':
				m.login = m.login || sign == '-'
				continue
			case 'r':
				return p, errors.New("a restricted shell cannot run the gate's check (no command names with slashes)")
			case 'p':
				privileged = sign == '-'
			case 'c':
				return p, errors.New("not an interactive shell: -c")
			case 'o', 'O':
				if i+1 < len(argv) && value == "" {
					i++
					value = argv[i]
					if c == 'o' && value == "posix" {
						m.posix = sign == '-'
					}
					if c == 'o' && value == "privileged" {
						privileged = sign == '-'
					}
				}
			}
			kept = append(kept, byte(c))
		}
		if len(kept) > 1 {
			shorts = append(shorts, string(kept))
		}
		if value != "" {
			shorts = append(shorts, value)
		}
	}
	rest := argv[i:]

	for _, gm := range gateModes {
		if gm.match(m) {
			m.startup, m.hook = gm.mode.startup, gm.mode.hook
			break
		}
	}
	if m.hook == hookEnv && privileged {
		return p, errors.New("a privileged (-p) shell in POSIX mode reads no $ENV")
	}
	p.mode = m
	p.argv = append([]string{name}, longs...)
	switch m.hook {
	case hookRCFile:
		p.argv = append(p.argv, "--rcfile", gate)
	case hookPrompt:
		p.argv = append(p.argv, "--norc", "--noprofile")
	}
	p.argv = append(p.argv, "-i")
	p.argv = append(p.argv, shorts...)
	p.argv = append(p.argv, rest...)

	p.env = []string{
		"EXECGATE_GATE_HOOK=" + string(m.hook),
		"EXECGATE_GATE_STARTUP=" + strings.Join(m.startup, " "),
		"EXECGATE_GATE_RC=" + p.rcfile,
	}
	switch m.hook {
	case hookEnv:
		// Bash expands $ENV: the path must read the same after that.
		if strings.ContainsFunc(gate, func(r rune) bool { return !isPlainPathRune(r) }) {
			return p, fmt.Errorf("gate file %s: path has characters $ENV would expand", gate)
		}
		p.drop = []string{"ENV"}
		if v, ok := lookupEnv(environ, "ENV"); ok {
			p.env = append(p.env, "EXECGATE_GATE_SAVED="+v)
		}
		p.env = append(p.env, "ENV="+gate)
	case hookPrompt:
		p.drop = []string{"PROMPT_COMMAND"}
		if v, ok := lookupEnv(environ, "PROMPT_COMMAND"); ok {
			p.env = append(p.env, "EXECGATE_GATE_SAVED="+v)
		}
		q, err := syntax.Quote(gate, syntax.LangBash)
		if err != nil {
			return p, fmt.Errorf("gate file %s: %w", gate, err)
		}
		p.env = append(p.env, "PROMPT_COMMAND=. "+q)
	}
	return p, nil
}

func isPlainPathRune(r rune) bool {
	return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+@%,", r)
}

// lookupEnv finds name in environ ("NAME=value" pairs).
func lookupEnv(environ []string, name string) (string, bool) {
	for i := len(environ) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(environ[i], name+"="); ok {
			return v, true
		}
	}
	return "", false
}

// gateEnviron is environ without the names in drop and without any gate
// settings it inherited, plus add.
func gateEnviron(environ, drop, add []string) []string {
	out := make([]string, 0, len(environ)+len(add))
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(drop, name) && !strings.HasPrefix(name, "EXECGATE_GATE_") {
			out = append(out, kv)
		}
	}
	return append(out, add...)
}

// gateFileName is the gate file's name: named by its content, so that
// shims of one version share it and different versions never clash.
func gateFileName() string {
	sum := sha256.Sum256([]byte(gateScript))
	return "gate-" + hex.EncodeToString(sum[:8]) + ".bash"
}

// gateDirs are where the gate file may go: the runtime directory (tmpfs,
// the hub's too), else the state directory.
func gateDirs(getenv func(string) string) []string {
	var dirs []string
	if rt := getenv("XDG_RUNTIME_DIR"); rt != "" && filepath.IsAbs(rt) {
		dirs = append(dirs, filepath.Join(rt, "execgate"))
	}
	if dir, err := state.Path(getenv, "gate"); err == nil {
		dirs = append(dirs, dir)
	}
	return dirs
}

// writeGate makes sure the gate file exists with the right content in the
// first usable directory and returns its path.
func writeGate(getenv func(string) string) (string, error) {
	dirs := gateDirs(getenv)
	if len(dirs) == 0 {
		return "", state.ErrNoHome
	}
	var errs []error
	for _, dir := range dirs {
		path, err := writeGateIn(dir)
		if err == nil {
			return path, nil
		}
		errs = append(errs, err)
	}
	return "", errors.Join(errs...)
}

// writeGateIn writes the gate file into dir, a directory of ours that no
// one else can write to (created 0700 when missing). A file already there
// is used only when it is ours, private and byte for byte the gate: bash
// runs whatever it holds.
func writeGateIn(dir string) (string, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("gate directory %s: %w", dir, err)
	}
	if err := privateDir(dir); err != nil {
		return "", err
	}
	path := filepath.Join(dir, gateFileName())
	if b, err := readPrivate(path); err == nil && string(b) == gateScript {
		return path, nil
	}
	f, err := os.CreateTemp(dir, ".gate-*")
	if err != nil {
		return "", fmt.Errorf("write gate file: %w", err)
	}
	tmp := f.Name()
	_, err = f.WriteString(gateScript)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp, 0o600)
	}
	if err == nil {
		err = os.Rename(tmp, path) // atomic: a concurrent shim reads old or new, both whole
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("write gate file %s: %w", path, err)
	}
	return path, nil
}

// privateDir checks that dir is a real directory of ours that others
// cannot write to.
func privateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("gate directory %s: %w", dir, err)
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case !fi.IsDir():
		return fmt.Errorf("gate directory %s is not a directory", dir)
	case !ok || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("gate directory %s is not ours", dir)
	case fi.Mode().Perm()&0o022 != 0:
		return fmt.Errorf("gate directory %s is writable by others (mode %#o)", dir, fi.Mode().Perm())
	}
	return nil
}

// readPrivate reads a regular file of ours that only we can read and
// write.
func readPrivate(path string) ([]byte, error) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !fi.Mode().IsRegular() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm() != 0o600 {
		return nil, fmt.Errorf("gate file %s: not a private file of ours", path)
	}
	return os.ReadFile(path)
}

// gateProbe is run by the real bash: it prints ok only when HISTCMD is the
// history number of the command being executed (recent bash; older ones
// report one more, as between command lines, which would let typed lines
// pass for the prompt's own commands) and ${var@P} and extdebug exist.
const gateProbe = `set -o history
f='\!'
if [[ $HISTCMD == "${f@P}" ]] && shopt -s extdebug; then echo execgate-gate-ok; fi
`

// probeBash checks that shell can run the gate.
func probeBash(ctx context.Context, shell string) error {
	ctx, cancel := context.WithTimeout(ctx, gateProbeWait)
	defer cancel()
	cmd := exec.CommandContext(ctx, shell, "--norc", "--noprofile", "-s")
	cmd.Env = []string{"PATH=/usr/bin:/bin", "LC_ALL=C"} // no BASH_ENV, no HISTFILE
	cmd.Stdin = strings.NewReader(gateProbe)
	out, err := cmd.Output()
	if err != nil || !bytes.Equal(out, []byte("execgate-gate-ok\n")) {
		return fmt.Errorf("shell %s cannot run the interactive gate (a recent bash is needed): %q %v", shell, bytes.TrimSpace(out), err)
	}
	return nil
}

// gateBinary is the execgate executable the gate calls back: the CLI
// (package self). Invoked under a shell's name it would be the shim.
func gateBinary() (string, error) {
	exe, err := self.CLI()
	if err != nil {
		return "", fmt.Errorf("locate execgate: %w", err)
	}
	if base := filepath.Base(exe); base == "bash" || base == "sh" {
		return "", fmt.Errorf("execgate is installed as %s itself; the gate cannot call it back", exe)
	}
	return exe, nil
}

// startsInteractive reports whether bash would start an interactive shell.
func (s *session) startsInteractive() bool {
	return s.cl.Source == FromStdin && (s.cl.Interactive || isTerminal(s.o.Stdin))
}

// interactive runs an interactive shell behind the gate. ok is false when
// this is no interactive shell, or when the gate cannot be set up: the
// caller then judges the shell as a whole (needs review), as before.
func (s *session) interactive(ctx context.Context, run interp.Options, req policy.Request, configPath string) (status int, sig syscall.Signal, ok bool) {
	if !s.startsInteractive() || s.dialect != policy.DialectBash {
		// The gate is a bash rc file: an interactive zsh is judged as
		// a program execgate cannot read (see evaluate), which needs
		// review as a whole.
		return 0, 0, false
	}
	plan, err := s.prepareGate(ctx, run, req, configPath)
	if err != nil {
		s.warnf("interactive gate: %v", err)
		return 0, 0, false
	}
	s.program, s.source = strings.Join(s.o.Argv, " "), "interactive"

	// The shell itself needs no approval: each line will. What runs before
	// the gate is up is the user's own start-up files (~/.bashrc, the
	// profile, $ENV), trusted as bash's own, and an --rcfile the caller
	// names, which needs review as any program the check cannot read.
	res := policy.Result{Command: s.program, Agent: req.Agent, Risk: policy.Safe, Decision: policy.Allow,
		Reasons: []string{"an interactive shell whose command lines execgate judges one by one"}}
	if req.Policy.Security == config.SecurityDeny {
		res.Decision = policy.Deny
	}
	if plan.rcfile != "" {
		res = addReason(req.Policy, res, fmt.Sprintf("--rcfile %s runs that file first, unchecked", plan.rcfile))
	}
	req.Command = s.program
	s.ev.Command, s.ev.Source = s.program, s.source
	s.ev.Risk, s.ev.Reasons, s.ev.Decision = res.Risk.String(), res.Reasons, string(res.Decision)
	v := s.decide(ctx, s.ev.ID, req, res, configPath)
	if !v.allow {
		ev := s.ev
		ev.Event, ev.Message = EventDenied, v.message
		v.stamp(&ev)
		ev.Decision = string(policy.Deny)
		s.record(ev)
		fmt.Fprintln(s.o.Stderr, v.message)
		return ExitDenied, 0, true
	}
	v.stamp(&s.ev)
	s.ev.Decision = string(policy.Allow)

	run.Argv, run.Env, run.MaxBytes = plan.argv, gateEnviron(s.o.Environ, plan.drop, plan.env), 0
	ev := s.ev
	ev.Event, ev.Exec = EventStarted, true
	s.record(ev)
	err = interp.Exec(interp.Options{Shell: run.Shell, Argv: run.Argv, Env: run.Env,
		Stdin: s.o.Stdin, Stdout: s.o.Stdout, Stderr: s.o.Stderr})
	s.log.Warn("exec gated shell; running it instead", "err", err)
	s.ev.Exec = false
	status, sig = s.runShell(ctx, run, nil)
	return status, sig, true
}

// prepareGate writes the gate file, checks the shell and plans its start.
func (s *session) prepareGate(ctx context.Context, run interp.Options, req policy.Request, configPath string) (gatePlan, error) {
	bin, err := gateBinary()
	if err != nil {
		return gatePlan{}, err
	}
	if err := probeBash(ctx, run.Shell); err != nil {
		return gatePlan{}, err
	}
	path, err := writeGate(s.getenv)
	if err != nil {
		return gatePlan{}, err
	}
	plan, err := planGate(run.Argv, path, s.o.Environ)
	if err != nil {
		return gatePlan{}, err
	}
	plan.env = append(plan.env, "EXECGATE_GATE_BIN="+bin, "EXECGATE_GATE_CONFIG="+configPath, "EXECGATE_GATE_AGENT="+req.Agent)
	return plan, nil
}
