package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// needRoot skips a test that needs files owned by root (and other owners).
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("needs root: a managed policy must be owned by root, and the test makes files owned by others")
	}
}

// managedWorld is a user file and a managed file in a root-only directory.
func managedWorld(t *testing.T, user, managed string) (userPath, managedPath string) {
	t.Helper()
	dir := t.TempDir()
	userPath = filepath.Join(dir, "user.json")
	managedPath = filepath.Join(dir, "etc", "managed.json")
	require.NoError(t, os.Mkdir(filepath.Dir(managedPath), 0o755))
	if user != "" {
		require.NoError(t, os.WriteFile(userPath, []byte(user), 0o600))
	}
	if managed != "" {
		require.NoError(t, os.WriteFile(managedPath, []byte(managed), 0o644))
	}
	return userPath, managedPath
}

const (
	looseUser = `{"version": 1,
	  "defaults": {"security": "full", "ask": "off", "askFallback": "full", "autoAllowSafe": true, "autoAllowWorkspaceRunners": true},
	  "agents": {"*": {"allowlist": [{"pattern": "git **"}]}, "codex": {"security": "full"}}}`
	gitPushManaged = `{"version": 1,
	  "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny", "autoAllowWorkspaceRunners": false},
	  "agents": {"*": {"denylist": [{"pattern": "git push **", "id": "no-push"}]}},
	  "protectedPaths": ["/srv/deploy", "~/infra"]}`
)

func TestManagedOnlyTightens(t *testing.T) {
	needRoot(t)
	user, managed := managedWorld(t, looseUser, gitPushManaged)
	cfg, _, warnings, err := load(user, managed)
	require.NoError(t, err)
	assert.Empty(t, warnings)
	require.NotNil(t, cfg.Managed)

	for _, agent := range []string{"claude-code", "codex", "*"} {
		eff := cfg.Resolve(agent)
		assert.Equal(t, SecurityAllowlist, eff.Policy.Security, agent)
		assert.Equal(t, AskOff, eff.Policy.Ask, agent, "off is stricter than the floor's on-miss: kept")
		assert.Equal(t, SecurityDeny, eff.Policy.AskFallback, agent)
		assert.True(t, eff.Policy.AutoAllowSafe, agent, "the managed file leaves it alone")
		assert.False(t, eff.Policy.AutoAllowWorkspaceRunners, agent)
		require.NotEmpty(t, eff.Denylist, agent)
		assert.Equal(t, "git push **", eff.Denylist[0].Pattern, "managed entries come first")
		assert.Equal(t, ManagedSource, eff.Denylist[0].Source)
		assert.Equal(t, "git **", eff.Allowlist[0].Pattern, "the user's allowlist stays: the denylist beats it")

		// No session override gets past the floor; the environment still
		// tightens.
		el := eff.Policy.Loosened(Elevated)
		assert.Equal(t, SecurityAllowlist, el.Security)
		assert.Equal(t, AskOff, el.Ask, "off is stricter than the floor's on-miss")
		assert.Equal(t, SecurityDeny, eff.Policy.Loosened(Override{AskFallback: SecurityFull}).AskFallback)
		assert.Equal(t, SecurityDeny, eff.Policy.Tightened(Override{Security: SecurityDeny}).Security)
	}
	assert.Equal(t, []string{"/srv/deploy", "/home/u/infra"}, cfg.ProtectedPaths("/home/u"))

	// Without the managed file the same user file is as loose as it says.
	cfg, _, _, err = load(user, managed+".missing")
	require.NoError(t, err)
	assert.Nil(t, cfg.Managed)
	assert.Equal(t, SecurityFull, cfg.Resolve("codex").Policy.Security)
	assert.Equal(t, SecurityFull, cfg.Resolve("codex").Policy.Loosened(Elevated).Security)
}

func TestManagedAgentLevels(t *testing.T) {
	needRoot(t)
	user, managed := managedWorld(t, `{"version": 1, "defaults": {"ask": "on-miss"}}`, `{"version": 1,
	  "defaults": {"ask": "off"},
	  "agents": {"codex": {"security": "deny"}, "gemini-cli": {"ask": "always", "autoAllowSafe": false}}}`)
	cfg, _, _, err := load(user, managed)
	require.NoError(t, err)
	assert.Equal(t, SecurityDeny, cfg.Resolve("codex").Policy.Security)
	assert.Equal(t, AskOff, cfg.Resolve("codex").Policy.Ask, "defaults reach every agent")
	assert.Equal(t, SecurityAllowlist, cfg.Resolve("claude-code").Policy.Security)
	g := cfg.Resolve("gemini-cli").Policy
	assert.Equal(t, AskAlways, g.Ask)
	assert.False(t, g.AutoAllowSafe)
}

func TestManagedConflictsReported(t *testing.T) {
	needRoot(t)
	user, managed := managedWorld(t, looseUser, gitPushManaged)
	cfg, _, _, err := load(user, managed)
	require.NoError(t, err)
	got := cfg.ManagedConflicts()
	want := []string{
		`defaults.security "full" is looser than the managed policy allows; "allowlist" applies (` + managed + `)`,
		`defaults.askFallback "full" is looser than the managed policy allows; "deny" applies (` + managed + `)`,
		`defaults.autoAllowWorkspaceRunners true is looser than the managed policy allows; false applies (` + managed + `)`,
		`agents.codex.security "full" is looser than the managed policy allows; "allowlist" applies (` + managed + `)`,
	}
	assert.Equal(t, want, got)

	r := check(user, managed)
	assert.False(t, r.OK())
	lines := strings.Join(r.Lines(""), "\n")
	assert.Contains(t, lines, user+`: overruled: agents.codex.security "full" is looser`)
	assert.Contains(t, lines, managed+": ok (a managed policy applies; it can only tighten yours)")
}

func TestManagedWarnings(t *testing.T) {
	m, warnings, err := ParseManaged([]byte(`{"version": 1,
	  "defaults": {"timeoutMs": 5, "autoAllowSafe": true, "security": "loose"},
	  "agents": {"*": {"allowlist": [{"pattern": "rm **"}]}, "codex": {"denylist": [{"pattern": ""}]}},
	  "protectedPaths": ["relative/x", 3, "/ok"], "typo": 1}`))
	require.NoError(t, err)
	assert.Equal(t, []string{
		`defaults.security: unknown value "loose" (want deny, allowlist or full); using "deny"`,
		`defaults.timeoutMs: a managed policy does not set timeouts (a shorter one is not stricter under askFallback "full"); ignored`,
		`defaults.autoAllowSafe: a managed policy can only switch it off; true ignored`,
		`agents.*.allowlist: a managed policy cannot allow anything (allowlists are each user's); ignored`,
		`agents.codex.denylist[0].pattern: empty pattern; entry dropped; using security "deny" for agent codex`,
		`protectedPaths[0]: want an absolute path or one under ~/, got "relative/x"; using security "deny" for every agent`,
		`protectedPaths[1]: want a path, got number 3; using security "deny" for every agent`,
		`typo: unknown field; ignored`,
	}, warnings)
	assert.Equal(t, SecurityDeny, m.Defaults.Security)
	assert.Nil(t, m.Defaults.TimeoutMs)
	assert.Nil(t, m.Defaults.AutoAllowSafe)
	assert.Equal(t, []string{"/ok"}, m.ProtectedPaths)
	assert.Equal(t, SecurityDeny, m.Agents["codex"].Security)
}

// TestManagedUnusableRefusesAll: a managed file that cannot be used or
// trusted stands for the strictest policy, whatever the user's file says,
// and the refusal names it and says who can fix it.
func TestManagedUnusableRefusesAll(t *testing.T) {
	needRoot(t)
	for _, tt := range []struct {
		name  string
		setup func(t *testing.T, managed string)
		want  string
	}{
		{"corrupt", func(t *testing.T, m string) { write(t, m, `{"version": 1, "defaults": {`, 0o644) }, "unexpected end of input"},
		{"duplicate key", func(t *testing.T, m string) { write(t, m, `{"agents": {}, "agents": {}}`, 0o644) }, "duplicate key"},
		{"version", func(t *testing.T, m string) { write(t, m, `{"version": 2}`, 0o644) }, "unsupported version"},
		{"not root's", func(t *testing.T, m string) {
			write(t, m, gitPushManaged, 0o644)
			require.NoError(t, os.Chown(m, 65534, 65534))
		}, "owned by uid 65534, not root"},
		{"others may write", func(t *testing.T, m string) { write(t, m, gitPushManaged, 0o666) }, "others may write it (mode 0666)"},
		{"group may write", func(t *testing.T, m string) { write(t, m, gitPushManaged, 0o664) }, "others may write it (mode 0664)"},
		{"directory others may write", func(t *testing.T, m string) {
			write(t, m, gitPushManaged, 0o644)
			require.NoError(t, os.Chmod(filepath.Dir(m), 0o777))
		}, "a directory above the managed policy and others may write it"},
		{"directory not root's", func(t *testing.T, m string) {
			write(t, m, gitPushManaged, 0o644)
			require.NoError(t, os.Chown(filepath.Dir(m), 65534, 65534))
		}, "a directory above the managed policy and is owned by uid 65534"},
		{"link to a file not root's", func(t *testing.T, m string) {
			other := filepath.Join(t.TempDir(), "other.json")
			write(t, other, gitPushManaged, 0o644)
			require.NoError(t, os.Chown(other, 65534, 65534))
			require.NoError(t, os.Symlink(other, m))
		}, "owned by uid 65534"},
		{"directory", func(t *testing.T, m string) { require.NoError(t, os.Mkdir(m, 0o755)) }, "is a directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			user, managed := managedWorld(t, looseUser, "")
			tt.setup(t, managed)
			cfg, _, _, err := load(user, managed)
			u, ok := AsUnusable(err)
			require.True(t, ok, "%v", err)
			assert.True(t, u.Managed)
			assert.Contains(t, u.Error(), tt.want)
			assert.Equal(t, SecurityDeny, cfg.Resolve("codex").Policy.Security)
			line := u.Refusal("")
			assert.True(t, strings.HasPrefix(line, "execgate: managed policy "+managed+": "), line)
			assert.True(t, strings.HasSuffix(line, "ask an administrator to fix it ('execgate config check' shows why)"), line)
			assert.NotContains(t, line, "\n")

			r := check(user, managed)
			assert.False(t, r.OK())
			assert.Contains(t, strings.Join(r.Lines(""), "\n"), "every command is refused until an administrator fixes it")
		})
	}
}

func write(t *testing.T, path, text string, mode os.FileMode) {
	t.Helper()
	require.NoError(t, os.WriteFile(path, []byte(text), mode))
	require.NoError(t, os.Chmod(path, mode))
}

// TestManagedStickyDirectory: a root-owned sticky directory (/tmp) does not
// make a root-owned managed file in it replaceable.
func TestManagedStickyDirectory(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	require.NoError(t, os.Chmod(dir, 0o777|os.ModeSticky))
	m := filepath.Join(dir, "managed.json")
	write(t, m, gitPushManaged, 0o644)
	_, _, err := LoadManaged(m)
	assert.NoError(t, err)
}

func TestManagedMissingIsNone(t *testing.T) {
	m, warnings, err := LoadManaged(filepath.Join(t.TempDir(), "none.json"))
	assert.Nil(t, m)
	assert.Nil(t, warnings)
	assert.NoError(t, err)
}

// FuzzManagedOnlyTightens: whatever the managed file and the user's file
// say, every agent's resolved policy — and every session override on top
// of it — is at least as strict with the managed file as without it, and
// keeps every denylist entry the user's file has.
func FuzzManagedOnlyTightens(f *testing.F) {
	f.Add([]byte(looseUser), []byte(gitPushManaged), "codex", "full", "off", "full")
	f.Add([]byte(`{"defaults": {"ask": "always"}}`), []byte(`{"defaults": {"ask": "off"}}`), "x", "", "on-miss", "")
	f.Add([]byte(`{}`), []byte(`{"agents": {"a": {"autoAllowSafe": false}}}`), "a", "allowlist", "", "deny")
	f.Fuzz(func(t *testing.T, user, managed []byte, agent, sec, ask, fallback string) {
		cfg, _, err := ParseConfig(user)
		if err != nil {
			return
		}
		m, _, err := ParseManaged(managed)
		if err != nil {
			return
		}
		o := Override{Security: Security(sec), Ask: Ask(ask), AskFallback: Security(fallback)}
		free := cfg.Resolve(agent)
		cfg.Managed = m
		held := cfg.Resolve(agent)
		for _, pair := range [][2]Policy{{free.Policy, held.Policy}, {free.Policy.Loosened(o), held.Policy.Loosened(o)}} {
			a, b := pair[0], pair[1]
			if b.Security.rank() > a.Security.rank() || b.AskFallback.rank() > a.AskFallback.rank() ||
				b.Ask.askRank() > a.Ask.askRank() ||
				b.AutoAllowSafe && !a.AutoAllowSafe || b.AutoAllowWorkspaceRunners && !a.AutoAllowWorkspaceRunners {
				t.Fatalf("managed policy loosened %+v to %+v", a, b)
			}
		}
		// Under the managed file the policy is never past its floor.
		fl := m.floor(agent)
		p := held.Policy.Loosened(o)
		if fl.Security.Valid() && p.Security.rank() > fl.Security.rank() || fl.Ask.Valid() && p.Ask.askRank() > fl.Ask.askRank() {
			t.Fatalf("past the floor %+v: %+v", fl, p)
		}
		for _, e := range free.Denylist {
			found := false
			for _, h := range held.Denylist {
				found = found || h.Pattern == e.Pattern
			}
			if !found {
				t.Fatalf("denylist entry %q lost", e.Pattern)
			}
		}
	})
}
