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
