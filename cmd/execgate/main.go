// Command execgate is a human-in-the-loop gate for the shell commands that AI
// coding agents and CI jobs run.
package main

import (
	"os"

	"github.com/execgate/execgate/sandbox"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperArg {
		sandbox.HelperMain(os.Args) // the sandbox's namespace helper: never returns
	}
	// Shell mode is decided before anything else is set up: it runs for
	// every command an agent issues, so it skips the CLI entirely.
	if argv, fromShell, ok := shellArgv(os.Args); ok {
		os.Exit(runShell(argv, fromShell, nil))
	}
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
