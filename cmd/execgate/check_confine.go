package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/sandbox"
	"github.com/execgate/execgate/shim"
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
	// Loopback, for a confined command that runs code: "private" when it
	// gets its own loopback network here (a test's server works), else
	// why it gets no network at all.
	Loopback string `json:"loopback,omitempty"`
	// Leftovers, for a confined command that runs code: "tracked" when
	// what it leaves running is held in a cgroup here (and paused while a
	// command runs unconfined in its workspace), else why not.
	Leftovers string `json:"leftovers,omitempty"`
	// Extra is what the agent's configuration adds to the boundary
	// (agents.NAME.sandbox): more to read, and, for a command that
	// writes, more to write.
	Extra config.SandboxConfig `json:"extra,omitzero"`
	// Withheld names the variables of this environment that a confined
	// command reaching the allowed hosts runs without: its secrets
	// (policy.SecretVariables).
	Withheld []string `json:"withheld,omitempty"`
	// NoProxy: the agent allows hosts, but the command could read a
	// registry's token from a file, so it gets no proxy to them.
	NoProxy bool `json:"noProxy,omitempty"`
}

// probeSandbox says whether this machine can confine (sandbox.Probe).
// Tests pin it, so that what check and replay print is the same on every
// machine, and force the machine without a sandbox.
var probeSandbox = sandbox.Probe

// probeLoopback says whether a confined command that runs code gets a
// private loopback network here (sandbox.ProbeLoopback, with this
// program as the helper, as the shims use theirs). Tests pin it.
var probeLoopback = func() error { return sandbox.ProbeLoopback(sandbox.Options{Helper: shim.SelfHelper}) }

// probeGroups says whether a confined command's leftovers can be held in
// a cgroup here (sandbox.ProbeGroups). Tests pin it.
var probeGroups = func() error { _, err := sandbox.ProbeGroups(); return err }

// leftoversOf is what check says of what a confined command that runs
// code leaves running, as loopbackOf says of its network.
func (c *checker) leftoversOf(n policy.Needs, st sandbox.Status) string {
	if !st.Supported() || !n.RunCode || !n.Within() {
		return ""
	}
	if c.leftovers == nil {
		why := "tracked"
		if err := probeGroups(); err != nil {
			why = "not tracked: " + err.Error()
		}
		c.leftovers = &why
	}
	return *c.leftovers
}

// loopbackOf is what check says of the private loopback network for
// needs n: only for a command that runs code, without the network,
// where the machine confines.
func (c *checker) loopbackOf(n policy.Needs, st sandbox.Status) string {
	if !st.Supported() || !n.RunCode || n.Network || !n.Within() {
		return ""
	}
	return c.privateNetwork()
}

// privateNetwork is "private" where a confined command that runs code
// gets a private network of its own here, else why not; probed once.
func (c *checker) privateNetwork() string {
	if c.loopback == nil {
		why := "private"
		if err := probeLoopback(); err != nil {
			why = "none, not even loopback: " + err.Error()
		}
		c.loopback = &why
	}
	return *c.loopback
}

// confinementOf decides, as the shim does, whether res runs confined.
// A confined command is allowed: check's decision says so.
func confinementOf(c *checker, res *policy.Result, getenv func(string) string) confinementJSON {
	st := probeSandbox(getenv)
	n := policy.NeedsOf(*res, c.base.Cwd, c.base.Home)
	if len(n.Downloads) > 0 && len(c.extra.Hosts) > 0 && st.Supported() && c.privateNetwork() == "private" && len(policy.EnvironCredentials(os.Environ())) == 0 {
		// As the shim: the proxy to the agent's hosts lives in the
		// private network.
		n = n.WithHosts(c.extra.Hosts, getenv)
	}
	if n.Within() && res.Decision != policy.Allow && st.Supported() {
		w := policy.WorkLossOf(context.Background(), *res, c.base.Cwd, c.base.Home, getenv, time.Now())
		n.Destroys = w.Ask
		n.Beyond = append(n.Beyond, n.Destroys...)
		for _, u := range w.Undoable {
			n.Undoable = append(n.Undoable, u.Reason)
		}
	}
	out := confinementJSON{Needs: n, Sandbox: st.Reason, Extra: c.extra, Loopback: c.loopbackOf(n, st), Leftovers: c.leftoversOf(n, st)}
	if out.Loopback == "private" && len(c.extra.Hosts) > 0 {
		// As the shim's grants: code that could read a registry's
		// token from a file gets no proxy; code that reaches it runs
		// without the environment's secrets.
		if policy.RegistryTokenFiles(c.base.Cwd, c.base.Home, getenv) {
			out.NoProxy = true
		} else {
			out.Withheld = policy.SecretVariables(os.Environ())
		}
	}
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
	if cj.Confined {
		for _, u := range cj.Needs.Undoable {
			fmt.Fprintf(w, "undo: %s\n", u)
		}
	}
	switch {
	case cj.Loopback == "private" && cj.Needs.Proxied:
		fmt.Fprintf(w, "network: a private loopback of its own; its downloads reach %s through the proxy, nothing else outside\n", strings.Join(cj.Extra.Hosts, ", "))
	case cj.Loopback == "private":
		fmt.Fprintln(w, "network: a private loopback of its own (a test's server works; nothing outside is reached)")
	case cj.Loopback != "":
		fmt.Fprintf(w, "network: %s\n", cj.Loopback)
	}
	if cj.NoProxy {
		fmt.Fprintln(w, "network: no proxy to the allowed hosts: a registry's token is in a file it can read (an .npmrc, a pip.conf)")
	}
	if len(cj.Withheld) > 0 {
		fmt.Fprintf(w, "environment: runs without %s (secrets: it reaches the allowed hosts)\n", strings.Join(cj.Withheld, ", "))
	}
	switch {
	case cj.Leftovers == "tracked":
		fmt.Fprintln(w, "leftovers: what it leaves running stays in a cgroup of its own, paused while a command runs unconfined here")
	case cj.Leftovers != "":
		fmt.Fprintf(w, "leftovers: %s\n", cj.Leftovers)
	}
	if cj.Sandbox == "" && (len(cj.Extra.Read) > 0 || len(cj.Extra.Write) > 0 || len(cj.Extra.Hosts) > 0) {
		var also []string
		if len(cj.Extra.Read) > 0 {
			also = append(also, "reads "+strings.Join(cj.Extra.Read, ", "))
		}
		if len(cj.Extra.Write) > 0 {
			also = append(also, "writes "+strings.Join(cj.Extra.Write, ", ")+" (when it writes)")
		}
		if len(cj.Extra.Hosts) > 0 {
			also = append(also, "reaches "+strings.Join(cj.Extra.Hosts, ", ")+" through the proxy (when it runs code)")
		}
		fmt.Fprintf(w, "the agent's sandbox setting adds: %s\n", strings.Join(also, "; "))
	}
}
