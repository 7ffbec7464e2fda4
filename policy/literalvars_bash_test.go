package policy

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"mvdan.cc/sh/v3/syntax"

	"github.com/execgate/execgate/policy/shparse"
)

// The values literalVars claims are checked against the real bash: each
// read it claims is replaced by a probe that makes bash print, on its
// standard error, the value the variable has right there; the program
// runs with every candidate variable set to another value in the
// environment. A read reached with a value other than the claimed one is
// a claim the analysis must not make.

// probeName is a variable no program sets: expanding it with ${…?MSG}
// makes the command substitution print MSG on stderr and exit.
const probeName = "__execgate_probe_unset"

// probedProgram is src with each claimed read replaced by a probe, and
// the claimed values by probe number.
func probedProgram(f *syntax.File, lv literalVars) (string, map[int]string) {
	claims := map[int]string{}
	replace := func(parts []syntax.WordPart) {
		for i, p := range parts {
			pe, ok := p.(*syntax.ParamExp)
			if !ok {
				continue
			}
			v, ok := lv[pe]
			if !ok {
				continue
			}
			n := len(claims)
			claims[n] = v
			// Quoted inside: the message is not split with IFS.
			probe := fmt.Sprintf(`: "${%s?"EGPROBE%d:${%s}:EGEND"}"`, probeName, n, pe.Param.Value)
			pf, err := syntax.NewParser().Parse(strings.NewReader(probe), "")
			if err != nil {
				panic(err)
			}
			parts[i] = &syntax.CmdSubst{Stmts: pf.Stmts}
		}
	}
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.DblQuoted:
			replace(n.Parts)
		case *syntax.Redirect:
			if n.Hdoc != nil {
				replace(n.Hdoc.Parts)
			}
		}
		return true
	})
	var b bytes.Buffer
	if err := syntax.NewPrinter().Print(&b, f); err != nil {
		return "", nil
	}
	return b.String(), claims
}

// checkLiteralVarsInBash runs program in a restricted bash with no PATH
// (builtins only) and checks every probe that ran.
func checkLiteralVarsInBash(t *testing.T, bash, program string) {
	f, err := shparse.Parse(program, syntax.LangBash)
	if err != nil {
		return
	}
	lv := findLiteralVars(f)
	if len(lv) == 0 {
		return
	}
	names := map[string]bool{}
	for pe := range lv {
		names[pe.Param.Value] = true
	}
	probed, claims := probedProgram(f, lv)
	if probed == "" {
		return
	}
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	// kill and the like stay out; -r refuses output redirections, cd,
	// exec and commands with a slash; PATH is empty.
	prelude := "enable -n kill ulimit suspend logout 2>/dev/null; set -r\n"
	cmd := exec.CommandContext(ctx, bash, "--norc", "--noprofile", "-c", prelude+probed)
	cmd.Dir = dir
	cmd.Env = []string{"PATH=", "HOME=" + dir, "LC_ALL=C"}
	for n := range names {
		cmd.Env = append(cmd.Env, n+"=from-the-environment")
	}
	cmd.Stdin = nil
	// A background job of the program keeps stderr open: the whole group
	// goes at the deadline, and Wait stops waiting for the pipe.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = time.Second
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	_ = cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left running
	}
	// bash prints "NAME: MESSAGE" when it expands a probe; a syntax error
	// quotes the probe's source instead, which is no value.
	for _, rest := range strings.Split(stderr.String(), probeName+": EGPROBE")[1:] {
		num, rest, _ := strings.Cut(rest, ":")
		value, _, ok := strings.Cut(rest, ":EGEND")
		n, err := strconv.Atoi(num)
		if !ok || err != nil {
			continue
		}
		if claims[n] != value {
			t.Fatalf("read %d of %q: the analysis claims %q, bash has %q\nprogram run:\n%s", n, program, claims[n], value, probed)
		}
	}
}

// literalVarsPrograms are programs whose reads literalVars may or may not
// claim: each claim it makes must hold in bash.
var literalVarsPrograms = []string{
	"snap=/tmp/a\necho \"at $snap\"",
	"snap=/tmp/a; echo \"at ${snap}\"; snap2=x; echo \"$snap2\"",
	"echo \"$snap\"; snap=/tmp/a; echo \"$snap\"",
	"snap=/tmp/a; snap=b; echo \"$snap\"",
	"snap=/tmp/a; read -r snap < /dev/null; echo \"$snap\"",
	"snap=/tmp/a; for snap in x; do :; done; echo \"$snap\"",
	"snap=/tmp/a; : \"${snap:=x}\"; echo \"$snap\"",
	"snap=/tmp/a; printf -v snap %s y; echo \"$snap\"",
	"snap=/tmp/a; declare snap=z; echo \"$snap\"",
	"snap=/tmp/a; unset snap; echo \"$snap\"",
	"snap=/tmp/a; let snap=1+1; echo \"$snap\"",
	"snap=/tmp/a; g() { snap=q; }; g; echo \"$snap\"",
	"snap=/tmp/a; trap 'snap=t' DEBUG; echo \"$snap\"",
	"snap=/tmp/a; eval 'snap=e'; echo \"$snap\"",
	"snap=/tmp/a; declare -n r=snap; r=n; echo \"$snap\"",
	"n=snap; snap=/tmp/a; declare \"$n=d\"; echo \"$snap\"",
	"n=snap; snap=/tmp/a; declare \"$n=d\" -f; echo \"$snap\"",
	"n=snap; snap=/tmp/a; printf -v \"$n\" %s p; echo \"$snap\"",
	"n=snap; snap=/tmp/a; read -r \"$n\" <<< r; echo \"$snap\"",
	"snap=/tmp/a; cat <<EOF\n$snap\nEOF",
	"m='hello there'; : <<EOF\n$m\nEOF\necho \"$m\"",
	"snap=/tmp/a; (snap=sub; echo \"$snap\"); echo \"$snap\"",
	"snap=/tmp/a; echo \"$snap\" | { read -r snap; echo \"$snap\"; }",
	"snap=/tmp/a; while read -r line; do echo \"$snap\"; snap=w; done <<< $'1\\n2'",
	"f() { echo \"$snap\"; }; snap=/tmp/a; f",
	"snap=/tmp/a; f() { local snap=l; echo \"$snap\"; }; f; echo \"$snap\"",
	"snap=/tmp/a; mapfile -t snap <<< m; echo \"$snap\"",
	"snap=/tmp/a; getopts a snap; echo \"$snap\"",
	"snap=/tmp/a; select snap in s; do break; done <<< 1; echo \"$snap\"",
	"snap=/tmp/a; [[ -v snap ]] && echo \"$snap\"",
	"snap=/tmp/a; coproc { :; }; echo \"$snap\"",
	"snap=/tmp/a; ((snap++)); echo \"$snap\"",
	"snap=/tmp/a; x=(${snap=1}); echo \"$snap\"",
	"snap=/tmp/a; alias snap=x; echo \"$snap\"",
	"snap=/tmp/a; export snap; echo \"$snap\"",
	"snap=/tmp/a; readonly snap; echo \"$snap\"",
	"readonly snap=r; snap=/tmp/a; echo \"$snap\"",
	"snap=/tmp/a; source /dev/null; echo \"$snap\"",
	"snap=/tmp/a; IFS=/; echo \"$snap\"",
	"PWD=/x; echo \"$PWD\"",
	"RANDOM=4; echo \"$RANDOM\"",
	"BASH_ARGV0=x; echo \"$BASH_ARGV0\"",
	"OPTIND=5; getopts a o; echo \"$OPTIND\"",
	"SECONDS=5; echo \"$SECONDS\"",
	"snap='a b'; echo \"$snap\" $snap",
	"snap=\"a\\$b\"; echo \"$snap\"",
	"snap=$'a\\tb'; echo \"$snap\"",
	"snap=a\\ b; echo \"$snap\"",
}

// TestLiteralVarsInBash checks literalVars' claims on the programs above.
func TestLiteralVarsInBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not found")
	}
	claimed := 0
	for _, p := range literalVarsPrograms {
		if f, err := shparse.Parse(p, syntax.LangBash); err == nil && len(findLiteralVars(f)) > 0 {
			claimed++
		}
		checkLiteralVarsInBash(t, bash, p)
	}
	if claimed < 5 {
		t.Fatalf("only %d programs had a claim: the probe checks nothing", claimed)
	}
}

// FuzzLiteralVars: whatever the program, each value literalVars claims is
// the one bash has there. The programs run in a restricted bash (no output
// redirection, no cd, no command with a slash) with an empty PATH and
// kill disabled: builtins only, in a directory of their own.
func FuzzLiteralVars(f *testing.F) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		f.Skip("bash not found")
	}
	for _, p := range literalVarsPrograms {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, program string) {
		if len(program) > 2000 || !forkBounded(program) {
			return
		}
		checkLiteralVarsInBash(t, bash, program)
	})
}

// forkBounded reports whether a fuzzed program cannot fork without bound:
// no function (f() { f | f; }), no background job or coprocess, and
// nothing that runs a string as code. A loop forks one process at a time
// and ends at the deadline.
func forkBounded(program string) bool {
	f, err := syntax.NewParser().Parse(strings.NewReader(program), "")
	if err != nil {
		return false
	}
	ok := true
	syntax.Walk(f, func(n syntax.Node) bool {
		switch n := n.(type) {
		case *syntax.FuncDecl:
			ok = false
		case *syntax.Stmt:
			if n.Background || n.Coprocess {
				ok = false
			}
		case *syntax.CallExpr:
			if len(n.Args) > 0 {
				switch n.Args[0].Lit() {
				case "", "eval", "trap", "source", ".", "alias", "command", "builtin", "bind", "complete", "enable", "exec":
					ok = false
				}
			}
		}
		return ok
	})
	return ok
}
