package doctor

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/BurntSushi/toml"

	"github.com/execgate/execgate/setup"
)

// Codex runs a hook from hooks.json only when its config.toml trusts it:
// [hooks.state."<hooks.json>:<event>:<group>:<handler>"] with a
// trusted_hash (set from its /hooks review), and only while [features]
// hooks is not false. `codex exec` has no review of its own: an untrusted
// hook is skipped without a word. Sources: Codex's /hooks documentation
// (developers.openai.com/codex/cli/slash-commands) and its hook trust
// change (openai/codex pull request 20321).
//
// doctor reads the trust entry but cannot recompute Codex's hash, so a
// hook edited since it was trusted still reads as trusted here; Codex's
// own /hooks shows it as modified.

// codexConfig is the part of Codex's config.toml doctor reads.
type codexConfig struct {
	Features struct {
		Hooks      *bool `toml:"hooks"`
		CodexHooks *bool `toml:"codex_hooks"`
	} `toml:"features"`
	Hooks struct {
		State map[string]struct {
			TrustedHash string `toml:"trusted_hash"`
			Enabled     *bool  `toml:"enabled"`
		} `toml:"state"`
	} `toml:"hooks"`
}

// codexTrusted reports whether Codex will run hook h of w, and why not.
func codexTrusted(o setup.Options, w setup.Wired, h setup.HookCommand) (bool, string) {
	dir := filepath.Dir(w.Settings) // config.toml sits beside hooks.json
	path := filepath.Join(dir, "config.toml")
	raw, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return false, "Codex has not trusted it, so it skips it (no " + homeRel(o.Home, path) + ")"
	}
	if err != nil {
		return false, fmt.Sprintf("%s cannot be read: %v", homeRel(o.Home, path), err)
	}
	var cfg codexConfig
	if err := toml.Unmarshal(raw, &cfg); err != nil {
		return false, fmt.Sprintf("%s cannot be read: %v", homeRel(o.Home, path), err)
	}
	if f := cfg.Features.Hooks; f != nil && !*f {
		return false, fmt.Sprintf("hooks are off in %s ([features] hooks = false)", homeRel(o.Home, path))
	}
	key := fmt.Sprintf("%s:pre_tool_use:%d:%d", w.Settings, h.Group, h.Handler)
	st, ok := cfg.Hooks.State[key]
	switch {
	case !ok || st.TrustedHash == "":
		return false, "Codex has not trusted it, so it skips it"
	case st.Enabled != nil && !*st.Enabled:
		return false, "disabled in Codex's /hooks"
	}
	return true, ""
}
