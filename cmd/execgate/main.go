// Command execgate is a human-in-the-loop gate for the shell commands that AI
// coding agents and CI jobs run.
package main

import (
	"os"
)

func main() {
	// Shell mode is decided before anything else is set up: it runs for
	// every command an agent issues, so it skips the CLI entirely.
	if argv, fromShell, ok := shellArgv(os.Args); ok {
		os.Exit(runShell(argv, fromShell, nil))
	}
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
