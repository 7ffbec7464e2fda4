package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/sandbox"
)

// confinementJSON is how the shim would run the command: confined, and
// with what, or why not.
type confinementJSON struct {
	// Confined: the command would run confined without asking.
	Confined bool `json:"confined"`
	// Needs are what the analysis says it needs.
	Needs policy.Needs `json:"needs"`
	// Sandbox is "" where this machine can confine, else why not.
	Sandbox string `json:"sandbox,omitempty"`
	// Extra is what the agent's configuration adds to the boundary
	// (agents.NAME.sandbox): more to read, and, for a command that
	// writes, more to write.
	Extra config.SandboxConfig `json:"extra,omitzero"`
}

// probeSandbox says whether this machine can confine (sandbox.Probe).
// Tests pin it, so that what check and replay print is the same on every
// machine, and force the machine without a sandbox.
var probeSandbox = sandbox.Probe

// confinementOf decides, as the shim does, whether res runs confined.
// A confined command is allowed: check's decision says so.
func confinementOf(c *checker, res *policy.Result, getenv func(string) string) confinementJSON {
	st := probeSandbox(getenv)
	n := policy.NeedsOf(*res, c.base.Cwd, c.base.Home)
	if n.Within() && res.Decision != policy.Allow && st.Supported() {
		n.Destroys = policy.WorkLoss(context.Background(), *res, c.base.Cwd, c.base.Home, getenv)
		n.Beyond = append(n.Beyond, n.Destroys...)
	}
	out := confinementJSON{Needs: n, Sandbox: st.Reason, Extra: c.extra}
	if policy.CanConfine(c.base.Policy, *res, n, st.Supported()) && c.refusal == "" {
		out.Confined = true
		res.Decision = policy.Allow
	}
	return out
}

// writeConfinement prints the line that says how the command would run.
func writeConfinement(w io.Writer, cj confinementJSON, res policy.Result, p config.Policy) {
	switch {
	case cj.Confined:
		fmt.Fprintf(w, "confined: runs unasked inside the sandbox (%s)\n", cj.Needs.Summary())
	case cj.Sandbox != "" && res.Decision != policy.Allow && cj.Needs.Within() && p.Security != config.SecurityDeny:
		fmt.Fprintf(w, "not confined: %s; so it asks\n", cj.Sandbox)
	case cj.Sandbox != "":
		fmt.Fprintf(w, "unconfined: %s\n", cj.Sandbox)
	case !cj.Needs.Within():
		fmt.Fprintf(w, "needs more than the sandbox: %s\n", cj.Needs.Beyond[0])
	default:
		fmt.Fprintf(w, "runs confined (%s)\n", cj.Needs.Summary())
	}
	if cj.Sandbox == "" && (len(cj.Extra.Read) > 0 || len(cj.Extra.Write) > 0) {
		var also []string
		if len(cj.Extra.Read) > 0 {
			also = append(also, "reads "+strings.Join(cj.Extra.Read, ", "))
		}
		if len(cj.Extra.Write) > 0 {
			also = append(also, "writes "+strings.Join(cj.Extra.Write, ", ")+" (when it writes)")
		}
		fmt.Fprintf(w, "the agent's sandbox setting adds: %s\n", strings.Join(also, "; "))
	}
}
