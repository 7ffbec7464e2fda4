package shim

import (
	"bytes"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// A shim started inside a confined command — npm runs a package's scripts
// with `sh -c`, which is the shim when the shims come first on PATH —
// cannot write the state directory: the sandbox it inherited grants
// writes to the workspace, its private TMPDIR and the build caches only.
// It needs no checkpoint of its own there: whatever it lets run stays
// inside that sandbox, whose workspace the outer shim checkpointed before
// the confined command started, and `execgate undo` of that command takes
// the nested writes back with it. Without this, every write of such a
// script asked, with nobody reachable from inside the sandbox: refused.
//
// The outer shim says which workspace it checkpointed in checkpointedEnv,
// and clears the variable for a confined command it took none for. The
// nested shim believes it only when it is itself held by a sandbox — its
// own checkpoint was refused permission, and the kernel reports
// no_new_privs, which execgate's sandbox sets — and when its workspace
// lies inside the one checkpointed. Outside a sandbox the variable changes
// nothing: the checkpoint is taken as always.

// checkpointedEnv names the workspace checkpointed before a confined
// command started, in that command's environment.
const checkpointedEnv = "EXECGATE_CHECKPOINTED"

// markCheckpointed returns env with checkpointedEnv naming the workspace
// checkpointed before this command, or without it when none was taken.
func (s *session) markCheckpointed(env []string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, checkpointedEnv+"=") {
			out = append(out, kv)
		}
	}
	if s.checkpointed != "" {
		out = append(out, checkpointedEnv+"="+s.checkpointed)
	}
	return out
}

// coveredByOuterCheckpoint reports whether the checkpoint of root that
// failed with err is not needed: this shim runs inside a confined command
// whose workspace, holding root, was checkpointed before it started.
func (s *session) coveredByOuterCheckpoint(root string, err error) bool {
	outer := s.getenv(checkpointedEnv)
	if outer == "" || !filepath.IsAbs(outer) || !errors.Is(err, fs.ErrPermission) {
		return false
	}
	outer = filepath.Clean(outer)
	if root != outer && !strings.HasPrefix(root, outer+"/") {
		return false
	}
	return noNewPrivs()
}

// noNewPrivs reports whether the kernel holds this process under
// no_new_privs, as execgate's sandbox does (and the sandbox cannot be
// applied without).
func noNewPrivs() bool {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return false
	}
	for _, line := range bytes.Split(b, []byte("\n")) {
		if v, ok := bytes.CutPrefix(line, []byte("NoNewPrivs:")); ok {
			return string(bytes.TrimSpace(v)) == "1"
		}
	}
	return false
}
