package shim

import (
	"bufio"
	"os"
	"path/filepath"
	"strings"

	"github.com/execgate/execgate/policy"
)

// What the sandbox grants as the workspace, and as its repository, comes
// from the disk: the directory holding .git, and the directory a .git
// file names. Both are things a confined command can change for the next
// one (it writes the workspace, and the agent's next command starts where
// it cd'd to), so neither is taken on trust.

// noWorkspace reports whether ws, as written or as it resolves on disk,
// can hold no project (the policy's rule: /, a home or what holds it,
// /tmp and the other temporary roots, the system's directories), or holds
// credentials (~/.ssh, ~/.kube, ~/.config). Granting one of those as the
// workspace would grant every file beneath it: started in /home, a
// confined command could write ~/.bashrc; in /tmp, every other program's
// files there; in ~/.kube, read the cluster's credentials.
func (s *session) noWorkspace(ws string) bool {
	if s.engine == nil {
		return true // nothing to judge it by: grant nothing
	}
	req := policy.Request{Home: s.getenv("HOME"), Getenv: s.getenv}
	if s.engine.NotAWorkspace(req, ws) || s.engine.HoldsCredentials(req, ws) {
		return true
	}
	real, err := filepath.EvalSymlinks(ws)
	if err != nil {
		return true
	}
	return real != filepath.Clean(ws) && s.engine.NotAWorkspace(req, real)
}

// ownGitDir reports whether dir, named by ws's .git file, is really ws's
// repository. The .git file lies in the workspace, where a confined
// command may write "gitdir: /home/me": the next command there would be
// granted the home. A directory inside ws grants nothing more; one
// outside must point back at ws as git itself left it: a worktree's
// "gitdir" file names ws's .git file, a submodule's configuration sets
// core.worktree to ws. Both lie outside the workspace, where no confined
// command can write.
func ownGitDir(ws, dir string) bool {
	if insideOnDisk(dir, ws) {
		return true
	}
	if b, err := os.ReadFile(filepath.Join(dir, "gitdir")); err == nil {
		back := strings.TrimSpace(string(b))
		if !filepath.IsAbs(back) {
			back = filepath.Join(dir, back)
		}
		if samePath(filepath.Clean(back), filepath.Join(ws, ".git")) {
			return true
		}
	}
	if wt, ok := coreWorktree(filepath.Join(dir, "config")); ok {
		if !filepath.IsAbs(wt) {
			wt = filepath.Join(dir, wt)
		}
		return samePath(filepath.Clean(wt), ws)
	}
	return false
}

// coreWorktree reads core.worktree from a git configuration file: the
// plain form git writes for a submodule (`worktree = ../../../sub` in
// [core]); anything fancier is not recognised, and then the directory is
// not granted.
func coreWorktree(config string) (string, bool) {
	f, err := os.Open(config)
	if err != nil {
		return "", false
	}
	defer f.Close()
	section := ""
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Trim(line, "[] \t"))
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok || section != "core" || !strings.EqualFold(strings.TrimSpace(key), "worktree") {
			continue
		}
		return strings.Trim(strings.TrimSpace(val), `"`), true
	}
	return "", false
}

// insideOnDisk reports whether p, resolved on disk, is dir or beneath it:
// a link in the workspace to the home is not inside it (Landlock grants
// what a path resolves to). A path that does not resolve is not.
func insideOnDisk(p, dir string) bool {
	rp, err := filepath.EvalSymlinks(p)
	if err != nil {
		return false
	}
	rd, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	return rp == rd || rd == "/" || strings.HasPrefix(rp, rd+"/")
}

// samePath reports whether a and b are the same path, as written or on
// disk.
func samePath(a, b string) bool {
	if a == b {
		return true
	}
	ra, errA := filepath.EvalSymlinks(a)
	rb, errB := filepath.EvalSymlinks(b)
	return errA == nil && errB == nil && ra == rb
}

// usableWorkspace is ws, or "" when it can hold no project.
func (s *session) usableWorkspace(ws string) string {
	if s.noWorkspace(ws) {
		return ""
	}
	return ws
}

// ownCommonDir reports whether common, named by dir's commondir file, is
// the repository dir is a worktree of. A commondir file lies wherever
// dir does — in the workspace, or in a place a confined command may also
// write (its TMPDIR, /dev/shm) — so it is believed only when it names
// nothing more than the workspace, or when dir is one of common's own
// worktrees (common/worktrees/NAME), which no confined command can make
// in a repository outside the workspace.
func ownCommonDir(ws, dir, common string) bool {
	if insideOnDisk(common, ws) {
		return true
	}
	rd, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return false
	}
	rc, err := filepath.EvalSymlinks(common)
	if err != nil {
		return false
	}
	return filepath.Dir(rd) == filepath.Join(rc, "worktrees")
}
