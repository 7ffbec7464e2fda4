package main

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestUndoThroughShimGit is TestUndoThroughShim in a repository whose
// files were committed before the first command: its first checkpoint
// keeps them as git blobs, and undoing the commands newest first still
// gives back each tree byte for byte.
func TestUndoThroughShimGit(t *testing.T) {
	realBash(t)
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	seeds := 8
	if testing.Short() {
		seeds = 2
	}
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			e := newShimEnv(t, fullConfig)
			r := rand.New(rand.NewPCG(seed, 2626))
			run := func(name string, args ...string) {
				cmd := exec.Command(name, args...)
				cmd.Dir = e.work
				out, err := cmd.CombinedOutput()
				require.NoError(t, err, "%s %v: %s", name, args, out)
			}
			// The start is made and committed without the shim.
			run("git", "init", "-q")
			run("bash", "-c", randomOps(r, 12))
			run("git", "add", "-A")
			run("git", "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "start", "--allow-empty")
			shell := func(prog string) {
				ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
				defer cancel()
				o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", prog), "")
				require.Equal(t, 0, o.status, "%+v", o)
			}
			var before []map[string]string
			for i := range 3 {
				before = append(before, gitless(workTree(t, e.work)))
				shell(randomOps(r, 1+r.IntN(8)))
				if i == 0 {
					// Everything was committed: the first checkpoint
					// copied nothing but an empty file's content.
					require.LessOrEqual(t, storedContents(t, e.state), 1)
				}
			}
			for i := len(before) - 1; i >= 0; i-- {
				o := e.undo(t, fmt.Sprint(i+1))
				require.Equal(t, 0, o.status, "%+v", o)
				require.Equal(t, before[i], gitless(workTree(t, e.work)), "undo %d: %s", i+1, o.stdout)
			}
		})
	}
}

// storedContents counts the contents in the checkpoint stores below state.
func storedContents(t *testing.T, state string) int {
	t.Helper()
	n := 0
	filepath.WalkDir(state, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && strings.Contains(p, "/objects/") && !strings.Contains(d.Name(), "tmp-") {
			n++
		}
		return nil
	})
	return n
}

// gitless is a tree without the repository's own files.
func gitless(tree map[string]string) map[string]string {
	for k := range tree {
		if k == ".git" || strings.HasPrefix(k, ".git/") {
			delete(tree, k)
		}
	}
	return tree
}
