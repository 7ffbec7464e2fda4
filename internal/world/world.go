// Package world builds throwaway worlds for tests that run real commands to
// check execgate's verdicts by their effects: a home directory with canary
// secrets beside a workspace, and processes confined by the kernel so that a
// test which runs an attack (or a program nobody read) can write nowhere
// else and execute nothing but what the test allows.
//
// Confinement uses Landlock. A test binary that confines processes calls
// MaybeConfined first thing in its TestMain: Confined starts the test binary
// itself, which restricts itself there and then executes the command.
package world

import (
	"debug/elf"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/landlock-lsm/go-landlock/landlock"
	ll "github.com/landlock-lsm/go-landlock/landlock/syscall"
)

// confineEnv carries a confinement from Confined to MaybeConfined.
const confineEnv = "EXECGATE_WORLD_CONFINE"

// confinement is what a confined process may do besides reading.
type confinement struct {
	Argv []string `json:"argv"`
	// Write lists the directories (and files) it may create, write,
	// remove and truncate in.
	Write []string `json:"write"`
	// Exec lists the directories and files it may execute from.
	Exec []string `json:"exec"`
}

// readOnly is reading files and listing directories, nothing else.
const readOnly = landlock.AccessFSSet(ll.AccessFSReadFile | ll.AccessFSReadDir)

// exec is executing files.
const execute = landlock.AccessFSSet(ll.AccessFSExecute)

// MaybeConfined must be called first in the TestMain of a package whose
// tests use Confined. In a process Confined started, it restricts the
// process and executes the confined command, never returning; otherwise it
// returns at once.
func MaybeConfined() {
	spec := os.Getenv(confineEnv)
	if spec == "" {
		return
	}
	var c confinement
	if err := json.Unmarshal([]byte(spec), &c); err != nil || len(c.Argv) == 0 {
		fmt.Fprintf(os.Stderr, "world: bad confinement %q: %v\n", spec, err)
		os.Exit(126)
	}
	os.Unsetenv(confineEnv)
	if err := restrict(c); err != nil {
		fmt.Fprintf(os.Stderr, "world: cannot confine: %v\n", err)
		os.Exit(126)
	}
	err := syscall.Exec(c.Argv[0], c.Argv, os.Environ())
	fmt.Fprintf(os.Stderr, "world: exec %s: %v\n", c.Argv[0], err)
	os.Exit(127)
}

// restrict confines this process (and so whatever it executes): read
// anywhere, write only under c.Write, execute only under c.Exec. It
// refuses rather than run unconfined on a kernel without Landlock ABI 3
// (truncation is controlled from ABI 3 on).
func restrict(c confinement) error {
	rules := []landlock.Rule{landlock.PathAccess(readOnly, "/")}
	for _, p := range c.Write {
		// Directory rights on a file are an error to Landlock.
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			rules = append(rules, landlock.RWFiles(p))
			continue
		}
		rules = append(rules, landlock.RWDirs(p).WithRefer())
	}
	if len(c.Exec) > 0 {
		rules = append(rules, landlock.PathAccess(execute, c.Exec...))
	}
	return landlock.V3.RestrictPaths(rules...)
}

// ErrUnsupported is returned by Confined where the kernel cannot confine.
var ErrUnsupported = errors.New("this kernel has no Landlock ABI 3 (needed to confine test processes)")

// Supported reports whether this kernel can confine processes as Confined
// does.
func Supported() bool {
	v, err := ll.LandlockGetABIVersion()
	return err == nil && v >= 3
}

// Confined returns a command that runs argv (argv[0] an absolute path) able
// to read anything, but to write only under write and to execute only files
// under exec (argv[0] is added). It fails with ErrUnsupported where Landlock
// is missing: the caller skips, saying why.
func Confined(write, exec_ []string, argv ...string) (*exec.Cmd, error) {
	if !Supported() {
		return nil, ErrUnsupported
	}
	if len(argv) == 0 || !filepath.IsAbs(argv[0]) {
		return nil, fmt.Errorf("world: confined argv %q must start with an absolute path", argv)
	}
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	execs := append([]string{argv[0]}, exec_...)
	for _, p := range execs {
		// A dynamically linked program is started by its ELF interpreter,
		// which the kernel executes too.
		if interp := interpreterOf(p); interp != "" {
			execs = append(execs, interp)
		}
	}
	spec, err := json.Marshal(confinement{Argv: argv, Write: write, Exec: execs})
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(self)
	cmd.Args = []string{argv[0]}
	cmd.Env = []string{confineEnv + "=" + string(spec)}
	return cmd, nil
}

// interpreterOf returns the resolved path of p's ELF interpreter, or "".
func interpreterOf(p string) string {
	f, err := elf.Open(p)
	if err != nil {
		return ""
	}
	defer f.Close()
	for _, prog := range f.Progs {
		if prog.Type != elf.PT_INTERP {
			continue
		}
		b, err := io.ReadAll(prog.Open())
		if err != nil {
			return ""
		}
		interp, err := filepath.EvalSymlinks(strings.TrimRight(string(b), "\x00"))
		if err != nil {
			return ""
		}
		return interp
	}
	return ""
}

// SkipUnlessConfinable skips t, saying why, where Confined cannot work.
func SkipUnlessConfinable(t testing.TB) {
	t.Helper()
	if !Supported() {
		t.Skip(ErrUnsupported.Error())
	}
}
