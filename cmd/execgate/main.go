// Command execgate is a human-in-the-loop gate for the shell commands that AI
// coding agents and CI jobs run.
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args, os.Stdin, os.Stdout, os.Stderr))
}
