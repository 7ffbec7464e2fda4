package policy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/execgate/execgate/internal/gitconfig"
)

// WorkLossTimeout bounds the look at git's status: a repository git
// cannot answer for in time is taken to hold uncommitted work.
const WorkLossTimeout = 3 * time.Second

// WorkLoss says why res would destroy work nothing can bring back — files
// git does not hold in a commit, in the git workspace holding cwd, or a
// whole tree outside any git workspace — one reason each; none when what
// it deletes or replaces is committed, ignored build output, or nothing.
// It reads the disk now, and asks git (the system's, with the
// repository's configuration checked first for programs it would run, see
// internal/gitconfig); what it cannot find out in time or at all counts as
// uncommitted.
// getenv is the user's environment (for XDG_CONFIG_HOME only).
func WorkLoss(ctx context.Context, res Result, cwd, home string, getenv func(string) string) []string {
	w := WorkLossOf(ctx, res, cwd, home, getenv, time.Now())
	why := slices.Clone(w.Ask)
	for _, u := range w.Undoable {
		why = append(why, u.Reason)
	}
	return why
}

// WorkLosses is what a command would destroy that git does not hold.
type WorkLosses struct {
	// Ask lists what nothing but a person's yes may destroy, one reason
	// each.
	Ask []string
	// Undoable lists the scratch files it deletes or replaces (see
	// scratchFile): files the task made, which the checkpoint taken right
	// before the command keeps, and execgate undo brings back.
	Undoable []Undoable
}

// Undoable is a scratch file a command deletes or replaces.
type Undoable struct {
	// Path is the file, absolute.
	Path string
	// Reason says what it destroys and what brings it back.
	Reason string
}

// Bounds on what counts as a scratch file (scratchFile).
const (
	// ScratchAge is how recently it was made: within an agent's task.
	ScratchAge = 12 * time.Hour
	// scratchBytes is the largest: a reproduction script, a log.
	scratchBytes = 1 << 20
	// maxScratch is the most one command may destroy unasked.
	maxScratch = 5
)

// WorkLossOf is WorkLoss, with the scratch files apart: a file the command
// names itself (not a tree, a pattern or a path only known at run time),
// untracked, small, and made within ScratchAge before now, as an agent's
// reproduction script is. Asking before `rm repro.py` protects nothing the
// checkpoint before it does not (a confined python3 -c could delete it
// unasked anyway); a user's older untracked file, a tree or a modified
// tracked file still asks.
func WorkLossOf(ctx context.Context, res Result, cwd, home string, getenv func(string) string, now time.Time) WorkLosses {
	var losses []Loss
	unknown, tree := false, false
	for _, seg := range res.Segments {
		losses = append(losses, seg.Losses...)
		unknown = unknown || seg.LossUnknown
		for _, l := range seg.Losses {
			tree = tree || l.Tree
		}
	}
	if len(losses) == 0 && !unknown {
		return WorkLosses{}
	}
	env := gitEnv(home, getenv)
	cfg, err := gitconfig.Load(gitconfig.Options{Dir: cwd, Getenv: func(k string) string { return env[k] }, Home: home})
	if err == nil && cfg.Repo.WorkTree == "" && cfg.Repo.GitDir == "" {
		// No git workspace: a deleted tree is gone.
		if tree || unknown {
			return asks("deletes a directory tree outside a git workspace: nothing could restore it")
		}
		return WorkLosses{}
	}
	if err != nil {
		return asks("deletes or replaces files, and what git holds of them cannot be known: " + oneLine(err.Error()))
	}
	top := cfg.Repo.WorkTree
	if top == "" {
		return asks("deletes or replaces files in a repository without a work tree")
	}
	if real, err := filepath.EvalSymlinks(top); err == nil {
		top = real // the losses' paths are resolved on disk
	}
	var why []string
	gitDir := cfg.Repo.GitDir
	if real, err := filepath.EvalSymlinks(gitDir); err == nil {
		gitDir = real
	}
	for _, l := range losses {
		if lossCovers(l, gitDir) || !strings.HasPrefix(gitDir, top+"/") && lossCovers(l, path.Join(top, ".git")) {
			why = append(why, fmt.Sprintf("deletes %s, the repository itself (its history and everything not pushed)", l.Path))
		}
	}
	for _, l := range losses {
		if l.Tree && inside(l.Path, top) && l.Path != top {
			if repo, err := nestedRepository(ctx, l); err != nil || repo != "" {
				if err != nil {
					why = append(why, fmt.Sprintf("deletes %s, and whether it holds a git repository of its own cannot be known: %v", l.Path, err))
				} else {
					why = append(why, fmt.Sprintf("deletes %s, which holds a git repository of its own (%s): its commits may be nowhere else", l.Path, repo))
				}
			}
		}
	}
	if len(why) > 0 {
		return WorkLosses{Ask: why}
	}
	if !unknown && !slices.ContainsFunc(losses, func(l Loss) bool { return inside(l.Path, top) }) {
		return WorkLosses{} // nothing of the workspace (a scratch file, /dev/null)
	}
	found, err := cfg.Programs(gitconfig.Invocation{Sub: "status", ReadOnly: true})
	if err == nil && len(found) > 0 {
		err = fmt.Errorf("git status would run %s", found[0])
	}
	var dirty []dirtyPath
	if err == nil {
		dirty, err = uncommitted(ctx, top, env)
	}
	if err != nil {
		return asks("deletes or replaces files of a git workspace, and which of them git does not hold cannot be known: " + oneLine(err.Error()))
	}
	if len(dirty) == 0 {
		return WorkLosses{} // everything is committed or ignored: all of it comes back
	}
	if unknown {
		why = append(why, fmt.Sprintf("deletes or replaces files only known at run time, in a git workspace with work not committed (%s)", dirty[0].path))
	}
	var undo []Undoable
	for _, l := range losses {
		if !inside(l.Path, top) {
			continue // outside the workspace: judged as a write elsewhere
		}
		for _, d := range dirty {
			p := path.Join(top, d.path)
			if !lossHits(l, p) {
				continue
			}
			if age, ok := scratchFile(l, p, d, now); ok && len(undo) < maxScratch && !slices.ContainsFunc(undo, func(u Undoable) bool { return u.Path == p }) {
				undo = append(undo, Undoable{Path: p, Reason: fmt.Sprintf("deletes or replaces %s, made %s ago and not in git: the checkpoint before it keeps it (execgate undo)", d.path, roundAge(age))})
			} else {
				why = append(why, fmt.Sprintf("deletes or replaces %s, which git does not hold in a commit (%s)", d.path, l.Path))
			}
			break
		}
	}
	return WorkLosses{Ask: why, Undoable: undo}
}

// asks is the WorkLosses of one reason to ask.
func asks(why string) WorkLosses { return WorkLosses{Ask: []string{why}} }

// scratchFile reports whether the loss l of the uncommitted path p (d)
// destroys only a scratch file: l names p itself (no tree, no pattern),
// git lists it untracked, and it is a regular file of one name, of at
// most scratchBytes, made less than ScratchAge before now (its birth
// time, which a later write or touch does not change); and how old it is.
// Where the file system keeps no birth time, nothing is scratch. A file
// of more names is no file of the task's: replacing its content replaces
// that of its other names too, which may lie outside the workspace,
// where no checkpoint keeps them.
func scratchFile(l Loss, p string, d dirtyPath, now time.Time) (time.Duration, bool) {
	if l.Tree || l.Pattern || l.Path != p || !d.untracked {
		return 0, false
	}
	born, size, links, ok := fileBirth(p)
	if !ok || size > scratchBytes || links != 1 {
		return 0, false
	}
	age := now.Sub(born)
	return age, age >= 0 && age < ScratchAge
}

// roundAge says age as a person would: seconds, minutes or hours.
func roundAge(age time.Duration) string {
	switch {
	case age < time.Minute:
		return age.Truncate(time.Second).String()
	case age < time.Hour:
		return age.Truncate(time.Minute).String()
	}
	return age.Truncate(time.Hour).String()
}

// gitEnv is the environment git runs in for the look: nothing of the
// agent's (GIT_DIR, GIT_CONFIG_*, an editor, a pager), only where the
// user's configuration is.
func gitEnv(home string, getenv func(string) string) map[string]string {
	env := map[string]string{"PATH": "/usr/bin:/bin", "LC_ALL": "C", "GIT_TERMINAL_PROMPT": "0", "GIT_OPTIONAL_LOCKS": "0"}
	if home != "" {
		env["HOME"] = home
	}
	if getenv == nil {
		return env
	}
	if x := getenv("XDG_CONFIG_HOME"); x != "" {
		env["XDG_CONFIG_HOME"] = x
	}
	return env
}

// uncommitted lists the paths under top (relative, as git prints them)
// that git does not hold in a commit: untracked and not ignored, or
// changed against the index or HEAD. Ignored files and clean tracked ones
// are not listed: both come back.
func uncommitted(ctx context.Context, top string, env map[string]string) ([]dirtyPath, error) {
	// The system's git, never the agent's PATH, which may lead to a
	// program of the workspace's.
	programs := [...]string{"/usr/bin/git", "/bin/git", "/usr/local/bin/git", "/opt/homebrew/bin/git"}
	git := ""
	for _, p := range programs {
		if fi, err := os.Stat(p); err == nil && fi.Mode().IsRegular() {
			git = p
			break
		}
	}
	if git == "" {
		return nil, errors.New("no git among " + strings.Join(programs[:], ", "))
	}
	ctx, cancel := context.WithTimeout(ctx, WorkLossTimeout)
	defer cancel()
	// Belt and braces beside the configuration check: no file system
	// monitor, no untracked cache written, no optional locks.
	cmd := exec.CommandContext(ctx, git, "--no-optional-locks", "-c", "core.fsmonitor=false", "-c", "core.untrackedCache=false",
		"-C", top, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--ignore-submodules=none")
	cmd.Env = make([]string, 0, len(env))
	for k, v := range env {
		cmd.Env = append(cmd.Env, k+"="+v)
	}
	cmd.Dir = top
	var out, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &stderr
	cmd.WaitDelay = time.Second
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("git status took longer than %s", WorkLossTimeout)
		}
		return nil, fmt.Errorf("git status: %v: %s", err, oneLine(strings.TrimSpace(stderr.String())))
	}
	return parsePorcelainStatus(out.Bytes())
}

// dirtyPath is a path git does not hold in a commit.
type dirtyPath struct {
	path string
	// untracked: git has never held it (status ??).
	untracked bool
}

// parsePorcelainZ is parsePorcelainStatus's paths.
func parsePorcelainZ(b []byte) ([]string, error) {
	dirty, err := parsePorcelainStatus(b)
	if err != nil {
		return nil, err
	}
	out := make([]string, len(dirty))
	for i, d := range dirty {
		out[i] = d.path
	}
	return out, nil
}

// parsePorcelainStatus reads `git status --porcelain=v1 -z`: "XY PATH\0",
// and for a rename or copy "XY NEW\0OLD\0". It lists every path with
// work git does not hold, except files deleted from the work tree
// (nothing left there to lose).
func parsePorcelainStatus(b []byte) ([]dirtyPath, error) {
	var out []dirtyPath
	fields := bytes.Split(b, []byte{0})
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if len(f) == 0 {
			continue
		}
		if len(f) < 4 || f[2] != ' ' {
			return nil, fmt.Errorf("git status printed %q, not a status line", f)
		}
		x, y, p := f[0], f[1], string(f[3:])
		if x == 'R' || x == 'C' {
			i++ // the old name follows
		}
		if y == 'D' || x == 'D' && y == ' ' || x == '!' {
			continue
		}
		out = append(out, dirtyPath{path: strings.TrimSuffix(p, "/"), untracked: x == '?' && y == '?'})
	}
	return out, nil
}

// lossCovers reports whether the loss l takes p with it: p is l's path
// (or matches its pattern), or, for a tree, lies below it.
func lossCovers(l Loss, p string) bool {
	lp, pp := splitPath(l.Path), splitPath(filepath.Clean(p))
	if len(pp) < len(lp) || !l.Tree && len(pp) != len(lp) {
		return false
	}
	return partsMatch(lp, pp[:len(lp)], l.Pattern)
}

// lossHits reports whether the loss l destroys anything of the path p
// git does not hold: l covers p, or p is a directory git lists whole (a
// nested repository, a submodule) that l reaches into.
func lossHits(l Loss, p string) bool {
	if lossCovers(Loss{Path: l.Path, Pattern: l.Pattern, Tree: true}, p) {
		// Replacing or deleting the file p, or a tree above it. A
		// non-tree loss of a directory above p fails (rm without -r, a
		// file over a directory) but is counted: fail closed.
		return true
	}
	lp, pp := splitPath(l.Path), splitPath(p)
	return len(lp) > len(pp) && partsMatch(lp[:len(pp)], pp, l.Pattern)
}

// partsMatch reports whether the path parts got match want, part by part
// (as bash patterns when pattern; a malformed pattern matches).
func partsMatch(want, got []string, pattern bool) bool {
	for i := range want {
		if want[i] == got[i] {
			continue
		}
		if !pattern {
			return false
		}
		if !shellMatch(want[i], got[i]) { // bash's [!x], not path.Match's
			return false
		}
	}
	return true
}

func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// maxNestedWalk bounds the directories nestedRepository reads for one
// loss: a larger tree asks rather than be looked through.
const maxNestedWalk = 20000

// regenerated are the directories whose contents a tool makes again
// (node_modules, a virtual environment, caches): nestedRepository does not
// look into them, and no tool leaves a repository's history there.
var regenerated = nameSet{
	".cache", ".gradle", ".mypy_cache", ".next", ".pytest_cache", ".ruff_cache", ".terraform", ".tox", ".venv",
	"__pycache__", "node_modules", "target", "venv", // target: Cargo's (its git dependencies live in ~/.cargo/git)
}

// nestedRepository finds a git repository of its own in the tree the loss
// l deletes (a .git directory, whose commits may exist nowhere else: git
// status of the workspace does not list one inside an ignored directory,
// such as a library cloned into build/). A .git file (a worktree's, a
// submodule's) names history kept elsewhere. It returns the first found,
// "" for none, or an error when the tree is larger than maxNestedWalk
// directories or cannot be read.
func nestedRepository(ctx context.Context, l Loss) (string, error) {
	roots := []string{l.Path}
	if l.Pattern {
		m, err := globLoss(l.Path) // as bash reads it: build/[!x]* takes build/lib
		if err != nil {
			return "", err
		}
		roots = m
	}
	seen := 0
	for len(roots) > 0 {
		dir := roots[len(roots)-1]
		roots = roots[:len(roots)-1]
		fi, err := os.Lstat(dir)
		if err != nil || !fi.IsDir() || regenerated.has(filepath.Base(dir)) {
			continue // gone, a file or a link (rm -r removes a link, not its tree), a tool's
		}
		if seen++; seen > maxNestedWalk {
			return "", fmt.Errorf("it holds more than %d directories", maxNestedWalk)
		}
		if ctx.Err() != nil {
			return "", ctx.Err()
		}
		entries, err := os.ReadDir(dir)
		if err != nil {
			return "", err
		}
		if bareRepository(entries) {
			return dir, nil
		}
		for _, e := range entries {
			if !e.IsDir() {
				continue
			}
			p := filepath.Join(dir, e.Name())
			if e.Name() == ".git" {
				return p, nil
			}
			roots = append(roots, p)
		}
	}
	return "", nil
}

// bareRepository reports whether a directory's entries make it a git
// directory of its own, as git decides (HEAD, objects/, refs/): a bare
// clone (mirror.git), or where a .git file or --separate-git-dir keeps
// one under another name.
func bareRepository(entries []os.DirEntry) bool {
	var head, objects, refs bool
	for _, e := range entries {
		switch e.Name() {
		case "HEAD":
			head = !e.IsDir()
		case "objects":
			objects = e.IsDir()
		case "refs":
			refs = e.IsDir()
		}
	}
	return head && objects && refs
}
