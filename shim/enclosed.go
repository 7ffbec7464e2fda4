package shim

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/policy"
)

// A shim started inside a confined command is held by that command's
// sandbox, which it cannot leave: nothing it lets run reaches past the
// boundary, whatever it is. A person asked from in there could not grant
// more either — the kernel holds the sandbox — and could not be reached
// (the hub's socket is outside it). So a command that would ask runs in
// place, held by the enclosing sandbox, as the enclosing command's own
// code would have run it without a shell: `rm -rf ~` fails there on the
// kernel's refusal, a deletion in the workspace is taken back with the
// enclosing command by `execgate undo`. What the policy refuses outright
// (a denylist entry, security=deny) is still refused, and ask=always
// asks.
//
// It matters wherever the shims come first on PATH: every version
// manager's shim (pyenv, rbenv, nodenv, asdf) is a bash script, which
// `#!/usr/bin/env bash` hands to this shim; a confined `python3 x.py`
// then ran pyenv's script through a nested shim, which judged the script
// (it sets PS4, runs pyenv) and asked, with nobody to ask: refused, on
// every run.

// confinedEnv names the workspace of the confined command that started
// this process, in that command's environment.
const confinedEnv = "EXECGATE_CONFINED"

// markConfined returns env with confinedEnv naming ws, or without it when
// ws is "" (an unconfined run: a stale mark is not passed on).
func markConfined(env []string, ws string) []string {
	out := make([]string, 0, len(env)+1)
	for _, kv := range env {
		if !strings.HasPrefix(kv, confinedEnv+"=") {
			out = append(out, kv)
		}
	}
	if ws != "" {
		out = append(out, confinedEnv+"="+ws)
	}
	return out
}

// enclosed reports whether this shim runs inside the sandbox of a
// confined command: the outer shim said so (confinedEnv), the kernel
// holds it under no_new_privs, the home directory, which exists, may not
// be opened, and a Unix socket may not be made — as execgate's sandbox
// has it (Landlock, and seccomp's EACCES), and as no ordinary process
// is. The variable alone, which an agent can set, changes nothing; a
// process that can fake all four already runs code unconfined and has no
// use for the shim.
func (s *session) enclosed(home string) bool {
	if v := s.getenv(confinedEnv); v == "" || !filepath.IsAbs(v) || home == "" || !filepath.IsAbs(home) {
		return false
	}
	if fi, err := os.Stat(home); err != nil || !fi.IsDir() {
		return false
	}
	f, err := os.Open(home)
	if err == nil {
		f.Close()
		return false
	}
	return errors.Is(err, fs.ErrPermission) && noNewPrivs() && unixSocketsRefused()
}

// runsEnclosed reports whether res, which would ask, runs in place
// instead, held by the enclosing sandbox (see above). A policy that asks
// about everything (ask=always) is taken at its word.
func (s *session) runsEnclosed(req policy.Request, res policy.Result) bool {
	return res.Decision == policy.AskHuman &&
		req.Policy.Ask != config.AskAlways && req.Policy.Security != config.SecurityDeny && s.enclosed(req.Home)
}
