// Package interp runs an approved command: with the real shell, or in an
// interpreter that checks every external command as it runs.
//
// It is the last step of the shim: by the time a command reaches this package
// it has been analysed and allowed, and the only job left is to run it so that
// the agent cannot tell execgate was there. The shell is the real bash (see
// [FindShell]), given the caller's argv unchanged, so $0, $BASH_VERSION, error
// messages and exit statuses are bash's own.
//
// When the caller's stdout and stderr are terminals the shim simply becomes the
// shell ([Exec]). Otherwise [Run] starts the shell as a child, relays signals
// to it, and caps what the caller receives: the first bytes of the combined
// output are passed on as they arrive, the last bytes are kept, and one marker
// line replaces whatever lies between; the full output is spilled to a file
// under the state directory. Memory use is bounded by the cap, not by the
// output.
//
// The second engine, RunEngine, runs the program in mvdan.cc/sh's
// interpreter instead and hands every external command, with its actual
// argv, to a Checker before it runs (and, optionally, every file the
// interpreter opens to a second one), so that programs whose commands are
// only known at run time can be judged command by command. Unsupported
// lists what that interpreter would not run as bash does; RunEngine
// refuses such programs. docs/interp-engine.md lists every difference.
//
// The package never decides whether a command may run and never writes its
// own diagnostics into the command's output; those go to the [log/slog]
// logger in [Options].
package interp
