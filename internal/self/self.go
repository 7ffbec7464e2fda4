// Package self tells execgate's own binaries apart from other programs.
// install.sh puts two side by side: execgate, the command-line tool, and
// execgate-shell, the shim alone, which the bash and sh links point at so
// that the process an agent starts for every command links and initialises
// nothing it does not use. Either may be running as the shim, so "is this
// program execgate?" must ask about both.
package self

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"sync"
)

// Names of the two binaries, as install.sh installs them.
const (
	CLIName   = "execgate"
	ShellName = "execgate-shell"
)

// Executable returns the running binary, symbolic links resolved. It is
// worked out once per process: the shim asks several times per command
// (its shell, its own hook, the shell it runs), and resolving a path costs
// a system call per directory on it.
func Executable() (string, error) {
	exeOnce.once.Do(func() {
		exeOnce.path, exeOnce.err = resolveExecutable()
		exeOnce.done = true
	})
	if !exeOnce.done {
		return "", errors.New("locate own executable: resolving it failed before")
	}
	return exeOnce.path, exeOnce.err
}

// exeOnce holds what Executable found. A zero-valued struct costs nothing
// when the process starts, where a package-level sync.OnceValues would be
// built by init code in every shim process.
var exeOnce struct {
	once sync.Once
	done bool // resolveExecutable returned (it did not panic)
	path string
	err  error
}

// resolveExecutable locates the running binary.
func resolveExecutable() (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("locate own executable: %w", err)
	}
	// On Linux os.Executable reads /proc/self/exe, a path the kernel
	// writes without links; resolving it again would cost a system call
	// per directory on it, on every command.
	if runtime.GOOS == "linux" {
		return exe, nil
	}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		exe = real
	}
	return exe, nil
}

// Binaries returns the running binary and, when it exists beside it, its
// sibling (execgate-shell for execgate and the other way round).
func Binaries() ([]string, error) {
	exe, err := Executable()
	if err != nil {
		return nil, err
	}
	return binariesOf(exe), nil
}

// binariesOf is Binaries for the executable exe.
func binariesOf(exe string) []string {
	out := []string{exe}
	sibling := filepath.Join(filepath.Dir(exe), CLIName)
	if filepath.Base(exe) == CLIName {
		sibling = filepath.Join(filepath.Dir(exe), ShellName)
	}
	if sibling != exe {
		if _, err := os.Stat(sibling); err == nil {
			out = append(out, sibling)
		}
	}
	return out
}

// Infos returns the file identities of Binaries, for os.SameFile.
func Infos() ([]os.FileInfo, error) {
	bins, err := Binaries()
	if err != nil {
		return nil, err
	}
	var out []os.FileInfo
	for _, b := range bins {
		fi, err := os.Stat(b)
		if err != nil {
			return nil, fmt.Errorf("own executable: %w", err)
		}
		out = append(out, fi)
	}
	return out, nil
}

// Same reports whether fi is one of infos.
func Same(fi os.FileInfo, infos []os.FileInfo) bool {
	for _, s := range infos {
		if os.SameFile(fi, s) {
			return true
		}
	}
	return false
}

// Is reports whether path is one of execgate's binaries (a link to one
// included).
func Is(path string) bool {
	infos, err := Infos()
	if err != nil {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && Same(fi, infos)
}

// CLI returns the command-line binary: the running one unless it is
// execgate-shell, whose sibling execgate it then is.
func CLI() (string, error) {
	exe, err := Executable()
	if err != nil {
		return "", err
	}
	return cliOf(exe)
}

// cliOf is CLI for the executable exe.
func cliOf(exe string) (string, error) {
	if filepath.Base(exe) != ShellName {
		return exe, nil
	}
	cli := filepath.Join(filepath.Dir(exe), CLIName)
	if _, err := os.Stat(cli); err != nil {
		return "", fmt.Errorf("%s runs beside %s, which is missing (run install.sh again): %w", ShellName, CLIName, err)
	}
	return cli, nil
}
