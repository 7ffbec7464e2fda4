package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The shim benchmarks run whole processes the way an agent does: stdout and
// stderr are pipes the caller reads. Compare each shim figure with its
// bash one (docs/BENCHMARKS.md, section Shim).

func benchShimRun(b *testing.B, e *shimEnv, dir, path string, argv ...string) {
	b.Helper()
	b.ResetTimer()
	for b.Loop() {
		cmd := e.command(b.Context(), path, argv...)
		cmd.Dir = dir
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			b.Fatalf("%v: %s", err, errb.String())
		}
	}
}

// gitRepo makes a repository with some history and a dirty file, for
// `git status`.
func gitRepo(b *testing.B) string {
	b.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		b.Skip("git is not installed")
	}
	dir := b.TempDir()
	run := func(args ...string) {
		cmd := exec.Command(git, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=b", "GIT_AUTHOR_EMAIL=b@x", "GIT_COMMITTER_NAME=b", "GIT_COMMITTER_EMAIL=b@x")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	run("init", "-q")
	for i := range 200 {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%03d.txt", i)), []byte(fmt.Sprint(i)), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	run("add", ".")
	run("commit", "-qm", "init")
	if err := os.WriteFile(filepath.Join(dir, "f000.txt"), []byte("changed"), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

const noCapConfig = `{"version":1,"output":{"maxBytes":0}}`

func BenchmarkShimBashTrue(b *testing.B) {
	e := newShimEnv(b, "")
	benchShimRun(b, e, e.work, realBash(b), "bash", "-c", "true")
}

// BenchmarkShimTrue: parse, policy, audit, then bash as a child with its
// output captured under the cap.
func BenchmarkShimTrue(b *testing.B) {
	realBash(b)
	e := newShimEnv(b, "")
	benchShimRun(b, e, e.work, e.shim("bash"), "bash", "-c", "true")
}

// BenchmarkShimTrueExec: with capping off, a lone literal command takes the
// shortcut: the shim execs bash instead of waiting for it.
func BenchmarkShimTrueExec(b *testing.B) {
	realBash(b)
	e := newShimEnv(b, noCapConfig)
	benchShimRun(b, e, e.work, e.shim("bash"), "bash", "-c", "true")
}

func BenchmarkShimBashGitStatus(b *testing.B) {
	e := newShimEnv(b, "")
	benchShimRun(b, e, gitRepo(b), realBash(b), "bash", "-c", "git status")
}

func BenchmarkShimGitStatus(b *testing.B) {
	realBash(b)
	e := newShimEnv(b, "")
	benchShimRun(b, e, gitRepo(b), e.shim("bash"), "bash", "-c", "git status")
}

func BenchmarkShimGitStatusExec(b *testing.B) {
	realBash(b)
	e := newShimEnv(b, noCapConfig)
	benchShimRun(b, e, gitRepo(b), e.shim("bash"), "bash", "-c", "git status")
}

// BenchmarkShimPipeline is a typical agent command with a pipe (no exec
// shortcut possible).
func BenchmarkShimBashPipeline(b *testing.B) {
	e := newShimEnv(b, "")
	benchShimRun(b, e, gitRepo(b), realBash(b), "bash", "-c", "git log --oneline -5 | head -3 && ls | wc -l")
}

func BenchmarkShimPipeline(b *testing.B) {
	realBash(b)
	e := newShimEnv(b, "")
	benchShimRun(b, e, gitRepo(b), e.shim("bash"), "bash", "-c", "git log --oneline -5 | head -3 && ls | wc -l")
}

// claudeEnvelope is `git status` as Claude Code sends it, with a snapshot
// in e's home directory.
func claudeEnvelope(b *testing.B, e *shimEnv) string {
	home := envValue(e.env, "HOME")
	snap := filepath.Join(home, ".claude", "shell-snapshots", "snapshot-bash-1763800000000-x1y2z3.sh")
	require.NoError(b, os.MkdirAll(filepath.Dir(snap), 0o700))
	require.NoError(b, os.WriteFile(snap, []byte("export SNAPSHOT_LOADED=1\n"), 0o600))
	return "source " + snap + " 2>/dev/null || true && shopt -u extglob 2>/dev/null || true && eval 'git status' < /dev/null && pwd -P >| " +
		filepath.Join(os.TempDir(), "claude-be9c-cwd")
}

// BenchmarkShimClaudeEnvelope is what an agent's every command costs
// through Claude Code's envelope (bash must run: no exec shortcut).
func BenchmarkShimBashClaudeEnvelope(b *testing.B) {
	e := newShimEnv(b, "")
	benchShimRun(b, e, gitRepo(b), realBash(b), "bash", "-c", claudeEnvelope(b, e))
}

func BenchmarkShimClaudeEnvelope(b *testing.B) {
	realBash(b)
	e := newShimEnv(b, "")
	benchShimRun(b, e, gitRepo(b), e.shim("bash"), "bash", "-c", claudeEnvelope(b, e))
}
