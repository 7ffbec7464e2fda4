package gitconfig

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/execgate/execgate/internal/state"
)

// Repo is the repository git finds from a starting directory.
type Repo struct {
	// GitDir is the repository's git directory ($GIT_DIR): the .git
	// directory, what a .git file points to, or a bare repository.
	GitDir string
	// CommonDir is where the shared parts live (config, hooks, info):
	// GitDir, or what GitDir/commondir or GIT_COMMON_DIR names for a
	// linked worktree.
	CommonDir string
	// WorkTree is the top of the working tree ("" for a bare
	// repository, or when git would take it from core.worktree).
	WorkTree string
}

// maxSmallFile bounds the .git files, commondir files and HEADs read
// during discovery: git reads a few hundred bytes of each.
const maxSmallFile = 64 << 10

// discover finds the repository git uses when started in dir with env,
// as setup.c's setup_git_directory_gently does: GIT_DIR when set, else
// upward from dir, at each level a .git directory or file, then the level
// itself as a bare repository, stopping below GIT_CEILING_DIRECTORIES. It
// returns a zero Repo when there is none. Where git would stop with an
// error (a .git file that names no repository), it returns an error: the
// caller cannot prove what git does.
func discover(dir string, env func(string) string) (Repo, error) {
	if gd := env("GIT_DIR"); gd != "" {
		gd = absFrom(dir, gd)
		r, err := repoAt(gd, env)
		if err != nil {
			return Repo{}, err
		}
		r.WorkTree = dir
		if wt := env("GIT_WORK_TREE"); wt != "" {
			r.WorkTree = absFrom(dir, wt)
		}
		return r, nil
	}
	ceilings := ceilingDirs(env("GIT_CEILING_DIRECTORIES"))
	for d := filepath.Clean(dir); ; {
		dotgit := filepath.Join(d, ".git")
		fi, err := os.Stat(dotgit)
		switch {
		case err == nil && fi.Mode().IsRegular():
			gd, err := readGitFile(dotgit)
			if err != nil {
				return Repo{}, err
			}
			r, err := repoAt(gd, env)
			if err != nil {
				return Repo{}, fmt.Errorf("%s: %w", dotgit, err)
			}
			r.WorkTree = d
			return r, nil
		case err == nil && fi.IsDir():
			if ok, err := isGitDirectory(dotgit, env); err != nil {
				return Repo{}, err
			} else if ok {
				r, err := repoAt(dotgit, env)
				if err != nil {
					return Repo{}, err
				}
				r.WorkTree = d
				return r, nil
			}
		case err != nil && !notExist(err):
			return Repo{}, fmt.Errorf("cannot read %s: %w", dotgit, err)
		}
		if ok, err := isGitDirectory(d, env); err != nil {
			return Repo{}, err
		} else if ok {
			return repoAt(d, env) // a bare repository
		}
		parent := filepath.Dir(d)
		if parent == d || ceilings[parent] {
			return Repo{}, nil
		}
		d = parent
	}
}

// notExist reports whether err says a path is not there (ENOENT, or a
// component that is not a directory), which git treats as "not here".
func notExist(err error) bool {
	var pe *fs.PathError
	return errors.Is(err, fs.ErrNotExist) || errors.As(err, &pe) && strings.Contains(pe.Err.Error(), "not a directory")
}

// ceilingDirs parses GIT_CEILING_DIRECTORIES: absolute directories git
// does not walk up into. Relative entries are ignored, as git ignores
// them; an entry git would resolve through a symbolic link is taken as
// written, which can only make the search go further than git's.
func ceilingDirs(v string) map[string]bool {
	if v == "" {
		return nil
	}
	out := map[string]bool{}
	for _, d := range filepath.SplitList(v) {
		if filepath.IsAbs(d) {
			out[filepath.Clean(d)] = true
		}
	}
	return out
}

// absFrom makes p absolute against dir.
func absFrom(dir, p string) string {
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(dir, p)
}

// readGitFile reads a .git file ("gitdir: PATH", PATH relative to the
// file's directory), as read_gitfile_gently does; it is an error when the
// file says anything else, as git stops then.
func readGitFile(file string) (string, error) {
	b, err := readSmall(file)
	if err != nil {
		return "", err
	}
	rest, ok := bytes.CutPrefix(b, []byte("gitdir: "))
	if !ok {
		return "", fmt.Errorf("%s is not a gitdir file", file)
	}
	p := strings.TrimRight(string(rest), " \t\r\n")
	if p == "" || strings.ContainsAny(p, "\x00\n") {
		return "", fmt.Errorf("%s: invalid gitdir line", file)
	}
	return absFrom(filepath.Dir(file), p), nil
}

// repoAt describes the git directory gd: its common directory from
// GIT_COMMON_DIR or gd/commondir.
func repoAt(gd string, env func(string) string) (Repo, error) {
	ok, err := isGitDirectory(gd, env)
	if err != nil {
		return Repo{}, err
	}
	if !ok {
		return Repo{}, fmt.Errorf("%s is not a git repository", gd)
	}
	common, err := commonDir(gd, env)
	if err != nil {
		return Repo{}, err
	}
	return Repo{GitDir: gd, CommonDir: common}, nil
}

// commonDir is the common directory of gd (get_common_dir_noenv).
func commonDir(gd string, env func(string) string) (string, error) {
	if c := env("GIT_COMMON_DIR"); c != "" {
		return absFrom(gd, c), nil
	}
	b, err := readSmall(filepath.Join(gd, "commondir"))
	if err != nil {
		if notExist(err) {
			return gd, nil
		}
		return "", err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	line = strings.TrimRight(line, "\r")
	if line == "" {
		return gd, nil
	}
	return absFrom(gd, line), nil
}

// isGitDirectory is setup.c's is_git_directory: a HEAD that is a
// symbolic ref into refs/ or an object id, and objects/ and refs/
// directories (in the common directory) git may enter.
func isGitDirectory(d string, env func(string) string) (bool, error) {
	if !validHead(filepath.Join(d, "HEAD")) {
		return false, nil
	}
	common, err := commonDir(d, env)
	if err != nil {
		return false, err
	}
	objects := filepath.Join(common, "objects")
	if o := env("GIT_OBJECT_DIRECTORY"); o != "" {
		objects = o
	}
	for _, p := range []string{objects, filepath.Join(common, "refs")} {
		if fi, err := os.Stat(p); err != nil || !fi.IsDir() {
			return false, nil
		}
	}
	return true, nil
}

// validHead is refs.c's validate_headref.
func validHead(p string) bool {
	fi, err := os.Lstat(p)
	if err != nil {
		return false
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		t, err := os.Readlink(p)
		return err == nil && strings.HasPrefix(t, "refs/")
	}
	b, err := readSmall(p)
	if err != nil {
		return false
	}
	if len(b) > 255 {
		b = b[:255]
	}
	if ref, ok := bytes.CutPrefix(b, []byte("ref:")); ok {
		return bytes.HasPrefix(bytes.TrimLeft(ref, " \t\r\n"), []byte("refs/"))
	}
	return hexPrefix(b, 40) || hexPrefix(b, 64)
}

func hexPrefix(b []byte, n int) bool {
	if len(b) < n {
		return false
	}
	for _, c := range b[:n] {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// readSmall reads a file of at most maxSmallFile bytes.
func readSmall(p string) ([]byte, error) {
	return readLimited(p, maxSmallFile)
}

// readLimited reads a file, refusing one larger than limit bytes: what
// execgate cannot read whole it cannot judge.
func readLimited(p string, limit int64) ([]byte, error) {
	return state.ReadFile(p, limit)
}
