package doctor

import (
	"fmt"
	"strings"

	"github.com/execgate/execgate/sandbox"
)

// sandbox says whether commands run confined here, and if not why not:
// without it, commands that would run confined unasked ask instead.
func (o Options) sandbox() Check {
	st := sandbox.Probe(o.getenv)
	if !st.Supported() {
		return Check{Status: Warn, Area: "sandbox", Text: st.Reason + "; commands run unconfined, and those that would run confined ask instead",
			Fix: "a Linux kernel with Landlock ABI " + fmt.Sprint(sandbox.MinABI) + " or later (6.12+), with lsm=landlock"}
	}
	return Check{Status: OK, Area: "sandbox", Text: fmt.Sprintf("Landlock ABI %d and seccomp: commands run confined", st.ABI)}
}

// getenv reads o.Environ, as the shim would see it.
func (o Options) getenv(name string) string {
	for _, kv := range o.Environ {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// loopback says whether a confined command that runs code gets its
// private loopback network (a test's own server), and if not why not;
// ok is false where nothing is confined anyway.
func (o Options) loopback() (Check, bool) {
	if !sandbox.Probe(o.getenv).Supported() {
		return Check{}, false
	}
	if err := sandbox.ProbeLoopback(sandbox.Options{Helper: o.SandboxHelper}); err != nil {
		return Check{Status: Warn, Area: "sandbox",
			Text: "confined commands that run code get no loopback network (" + err.Error() + "): a test that listens on 127.0.0.1 fails confined",
			Fix:  "allow this user to make user namespaces (Ubuntu: an AppArmor profile for execgate, or kernel.apparmor_restrict_unprivileged_userns=0; a container: a seccomp profile that permits unshare)"}, true
	}
	return Check{Status: OK, Area: "sandbox", Text: "confined commands that run code get a private loopback network: they may listen on 127.0.0.1 and ::1, and reach nothing outside"}, true
}

// leftovers says whether what a confined command leaves running is
// tracked in a cgroup of its own (paused while a command runs unconfined
// in its workspace), and if not why not; ok is false where nothing is
// confined anyway.
func (o Options) leftovers() (Check, bool) {
	if !sandbox.Probe(o.getenv).Supported() {
		return Check{}, false
	}
	dir, err := sandbox.ProbeGroups()
	if err != nil {
		return Check{Status: Warn, Area: "sandbox",
			Text: "processes confined commands leave running are not tracked (" + err.Error() + "): one could change git's hooks while a command your allowlist lets through runs unconfined; a change is still caught at the next command",
			Fix:  "start the agent in a cgroup of your own, e.g. systemd-run --user --scope -p Delegate=yes AGENT"}, true
	}
	return Check{Status: OK, Area: "sandbox", Text: "processes confined commands leave running are tracked in cgroups under " + dir + ", and paused while a command runs unconfined in their workspace"}, true
}
