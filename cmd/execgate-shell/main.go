// Command execgate-shell is execgate's shim alone: the binary that
// install.sh links as bash, sh and zsh. An agent starts it for every command it
// runs, so it links only the shim's path through the code — no CLI, web
// approver, set-up or doctor — and initialises nothing it does not use
// (docs/BENCHMARKS.md, issue 16). The execgate binary behaves the same when
// invoked under those names; the two are built from one tree and
// `execgate doctor` checks that they match.
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/execgate/execgate/sandbox"
	"github.com/execgate/execgate/shim"
)

func main() {
	if len(os.Args) > 1 && os.Args[1] == sandbox.HelperArg {
		sandbox.HelperMain(os.Args) // the sandbox's namespace helper: never returns
	}
	if len(os.Args) == 0 || !shim.IsShellName(os.Args[0]) {
		fmt.Fprintln(os.Stderr, "execgate-shell: run me through a link named bash, sh or zsh (install.sh makes them); the command-line tool is execgate")
		os.Exit(2)
	}
	os.Exit(shim.Main(context.Background(), shim.Options{Argv: os.Args, SandboxHelper: shim.SelfHelper}))
}
