package interp

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/execgate/execgate/internal/self"
)

// defaultShells are the shells FindShell tries, in order, when none is
// configured. bash comes first because agents are written against it; /bin/sh
// is the last resort so that a machine without bash still runs something
// rather than nothing.
func defaultShells() []string {
	return []string{"/bin/bash", "/usr/bin/bash", "/bin/sh"}
}

// zshShells are the places FindZsh looks for the real zsh, in order: the
// system's, then Homebrew's and /usr/local's, where macOS and hand-built
// installs put it.
func zshShells() []string {
	return []string{"/bin/zsh", "/usr/bin/zsh", "/usr/local/bin/zsh", "/opt/homebrew/bin/zsh"}
}

// FindZsh returns the real zsh that runs approved commands when the shim
// is invoked as zsh: the first usable entry of zshShells, by the same rules
// as FindShell (never execgate itself, whatever the file is called). It
// never falls back to bash or sh, which would run the command with another
// meaning than the one judged.
func FindZsh() (string, error) {
	self, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find zsh: locate own executable: %w", err)
	}
	return findShell("", zshShells(), self)
}

// FindShell returns the shell that runs approved commands: configured (the
// shell.path setting) when it is set, else the first usable entry of
// /bin/bash, /usr/bin/bash, /bin/sh.
//
// A usable shell is an absolute path to an executable regular file that is
// not the running executable. The shim is typically installed as the agent's
// "bash", possibly through a symlink or hard link, so names and paths prove
// nothing: the check compares file identity (os.SameFile) with
// execgate's binaries (package self), and running the shim as its own shell
// would recurse forever.
// A configured path that is not usable is an error, not a reason to fall back
// to the defaults: the user asked for that shell.
func FindShell(configured string) (string, error) {
	bins, err := self.Binaries()
	if err != nil {
		// Without our own identity we cannot rule out running ourselves.
		return "", fmt.Errorf("find shell: %w", err)
	}
	return findShell(configured, defaultShells(), bins...)
}

// findShell is FindShell with the candidates and the executables to avoid
// (execgate's binaries) passed in, so that tests can build scenarios
// around them.
func findShell(configured string, candidates []string, selves ...string) (string, error) {
	var selfInfo []fs.FileInfo
	for _, p := range selves {
		fi, err := os.Stat(p)
		if err != nil {
			return "", fmt.Errorf("find shell: %w", err)
		}
		selfInfo = append(selfInfo, fi)
	}
	if configured != "" {
		if err := usableShell(configured, selfInfo); err != nil {
			return "", err
		}
		return configured, nil
	}
	for _, c := range candidates {
		if usableShell(c, selfInfo) == nil {
			return c, nil
		}
	}
	return "", fmt.Errorf("no usable shell found (tried %s)", strings.Join(candidates, ", "))
}

// usableShell reports why path cannot serve as the shell, or nil if it can.
func usableShell(path string, selves []fs.FileInfo) error {
	if !filepath.IsAbs(path) {
		// A PATH lookup could well find the shim, which is installed as bash.
		return fmt.Errorf("shell %q: path must be absolute", path)
	}
	fi, err := os.Stat(path)
	if err != nil {
		return fmt.Errorf("shell %s: %w", path, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("shell %s: not a regular file", path)
	}
	if err := unix.Access(path, unix.X_OK); err != nil {
		return fmt.Errorf("shell %s: not executable: %w", path, err)
	}
	if self.Same(fi, selves) {
		return fmt.Errorf("shell %s is execgate itself", path)
	}
	return nil
}

// checkShell is the guard Run and Exec apply to the shell they are given:
// the same rules as FindShell, so that a wrong path from the caller cannot
// make the shim run itself.
func checkShell(path string) error {
	if path == "" {
		return errors.New("no shell given")
	}
	selves, err := self.Infos()
	if err != nil {
		return fmt.Errorf("check shell: %w", err)
	}
	return usableShell(path, selves)
}
