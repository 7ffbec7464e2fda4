package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/sandbox"
)

// pinSandbox makes check and replay see a machine that confines (Landlock
// ABI 7) when can is set, else one without Landlock, whatever this
// machine's kernel: their output is then the same everywhere.
func pinSandbox(t *testing.T, can bool) {
	t.Helper()
	old, oldLoopback, oldGroups := probeSandbox, probeLoopback, probeGroups
	t.Cleanup(func() { probeSandbox, probeLoopback, probeGroups = old, oldLoopback, oldGroups })
	probeLoopback = func() error { return nil }
	probeGroups = func() error { return nil }
	st := sandbox.Status{ABI: 7}
	if !can {
		st = sandbox.Status{Reason: "this kernel has no Landlock (forced by the test)"}
	}
	probeSandbox = func(func(string) string) sandbox.Status { return st }
}

// TestCheckConfinement: where the machine confines, a command whose
// only unproven effects lie in the workspace is allowed as confined;
// where it cannot (no Landlock, an ABI too old, no seccomp), nothing is
// confined and the same command asks — fail closed. A command that needs
// more asks either way, and a daemon's client is never confined.
func TestCheckConfinement(t *testing.T) {
	checkEnv(t)
	type verdict struct {
		Decision    string `json:"decision"`
		Confinement struct {
			Confined bool   `json:"confined"`
			Sandbox  string `json:"sandbox"`
		} `json:"confinement"`
	}
	judge := func(command string) (verdict, string) {
		t.Helper()
		code, out, errOut := checkRun(t, "", "--json", "--", command)
		require.Equal(t, 0, code, errOut)
		var v verdict
		require.NoError(t, json.Unmarshal([]byte(out), &v), out)
		_, text, _ := checkRun(t, "", "--", command)
		return v, text
	}
	for _, can := range []bool{true, false} {
		pinSandbox(t, can)
		v, text := judge("python3 repro.py")
		assert.Equal(t, can, v.Confinement.Confined, text)
		if can {
			assert.Equal(t, "allow", v.Decision)
			assert.Contains(t, text, "confined: runs unasked inside the sandbox")
		} else {
			assert.Equal(t, "ask", v.Decision)
			assert.Contains(t, v.Confinement.Sandbox, "no Landlock")
			assert.Contains(t, text, "not confined: this kernel has no Landlock (forced by the test); so it asks")
		}
		for _, needsMore := range []string{"curl -fsSL https://example.com/x", "docker build -t x .", "mkdir ~/elsewhere"} {
			v, text := judge(needsMore)
			assert.False(t, v.Confinement.Confined, "%s: %s", needsMore, text)
			assert.Equal(t, "ask", v.Decision, needsMore)
			if can {
				assert.True(t, strings.Contains(text, "needs more than the sandbox"), text)
			}
		}
	}
}

// TestCheckShowsSandboxSetting: check says what the agent's sandbox
// setting adds, in text and JSON, expanded against the home.
func TestCheckShowsSandboxSetting(t *testing.T) {
	checkEnv(t)
	cfg := filepath.Join(t.TempDir(), "exec-approvals.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"version": 1, "agents": {"test": {"sandbox": {"read": ["~/.m2"], "write": ["/srv/out"]}}}}`), 0o600))
	check := func(args ...string) string {
		var out, errb bytes.Buffer
		code := run(append([]string{"execgate", "--config", cfg, "--agent", "test", "check", "--cwd", "/home/agent/project"}, args...), strings.NewReader(""), &out, &errb)
		require.Equal(t, 0, code, errb.String())
		assert.Empty(t, errb.String())
		return out.String()
	}
	assert.Contains(t, check("--", "python3 repro.py"), "the agent's sandbox setting adds: reads /home/agent/.m2; writes /srv/out (when it writes)\n")
	var v struct {
		Confinement struct {
			Extra struct{ Read, Write []string } `json:"extra"`
		} `json:"confinement"`
	}
	require.NoError(t, json.Unmarshal([]byte(check("--json", "--", "python3 repro.py")), &v))
	assert.Equal(t, []string{"/home/agent/.m2"}, v.Confinement.Extra.Read)
	assert.Equal(t, []string{"/srv/out"}, v.Confinement.Extra.Write)
}

// TestCheckShowsAllowedHosts: check says which hosts a code-running
// command reaches through the proxy, and drops a malformed entry with a
// warning rather than allowing it.
func TestCheckShowsAllowedHosts(t *testing.T) {
	checkEnv(t)
	cfg := filepath.Join(t.TempDir(), "exec-approvals.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"version": 1, "agents": {"test": {"sandbox": {"hosts": ["pypi.org", "*.pythonhosted.org", "localhost"]}}}}`), 0o600))
	var out, errb bytes.Buffer
	code := run([]string{"execgate", "--config", cfg, "--agent", "test", "check", "--cwd", "/home/agent/project", "--", "python3 repro.py"}, strings.NewReader(""), &out, &errb)
	require.Equal(t, 0, code, errb.String())
	assert.Contains(t, out.String(), "the agent's sandbox setting adds: reaches *.pythonhosted.org, pypi.org through the proxy (when it runs code)\n")
	assert.Contains(t, errb.String(), `"localhost"`)
}

// TestCheckJSONLConfinement: --jsonl answers each line as check answers
// one command — confined where the shim would confine it.
func TestCheckJSONLConfinement(t *testing.T) {
	checkEnv(t)
	for _, can := range []bool{true, false} {
		pinSandbox(t, can)
		code, out, errOut := checkRun(t, "\"python3 repro.py\"\n\"curl https://example.com\"\n", "--jsonl")
		require.Equal(t, 0, code, errOut)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Len(t, lines, 2)
		var v [2]struct {
			Decision    string `json:"decision"`
			Confinement struct {
				Confined bool `json:"confined"`
			} `json:"confinement"`
		}
		for i := range lines {
			require.NoError(t, json.Unmarshal([]byte(lines[i]), &v[i]))
		}
		assert.Equal(t, can, v[0].Confinement.Confined)
		assert.Equal(t, map[bool]string{true: "allow", false: "ask"}[can], v[0].Decision)
		assert.False(t, v[1].Confinement.Confined)
		assert.Equal(t, "ask", v[1].Decision)
	}
}

// TestCheckSaysLoopback: check says whether a confined command that runs
// code gets its private loopback network here, and why not; a command
// that runs no code is told nothing of it.
func TestCheckSaysLoopback(t *testing.T) {
	checkEnv(t)
	_, text, _ := checkRun(t, "", "--", "python3 repro.py")
	assert.Contains(t, text, "network: a private loopback of its own")
	probeLoopback = func() error { return errors.New("cannot make a user namespace: operation not permitted") }
	_, text, _ = checkRun(t, "", "--", "python3 repro.py")
	assert.Contains(t, text, "network: none, not even loopback: cannot make a user namespace: operation not permitted")
	_, out, _ := checkRun(t, "", "--json", "--", "python3 repro.py")
	assert.Contains(t, out, `"loopback":"none, not even loopback: cannot make a user namespace`)
	_, text, _ = checkRun(t, "", "--", "echo hi > notes.txt")
	assert.NotContains(t, text, "loopback")
}

// TestCheckSaysLeftovers: check says whether what a confined command that
// runs code leaves running is held in a cgroup here, and why not.
func TestCheckSaysLeftovers(t *testing.T) {
	checkEnv(t)
	_, text, _ := checkRun(t, "", "--", "python3 repro.py")
	assert.Contains(t, text, "leftovers: what it leaves running stays in a cgroup of its own")
	probeGroups = func() error { return errors.New("cgroup: /sys/fs/cgroup is mounted read-only") }
	_, text, _ = checkRun(t, "", "--", "python3 repro.py")
	assert.Contains(t, text, "leftovers: not tracked: cgroup: /sys/fs/cgroup is mounted read-only")
	_, out, _ := checkRun(t, "", "--json", "--", "python3 repro.py")
	assert.Contains(t, out, `"leftovers":"not tracked: cgroup:`)
	_, text, _ = checkRun(t, "", "--", "echo hi > notes.txt")
	assert.NotContains(t, text, "leftovers")
}

// TestCheckDownloadThroughAllowedHosts: check says a download from an
// allowed registry runs confined through the proxy, and that the same
// download asks where the registry is not allowed or no private network
// can be made.
func TestCheckDownloadThroughAllowedHosts(t *testing.T) {
	checkEnv(t)
	pinSandbox(t, true)
	cfg := filepath.Join(t.TempDir(), "exec-approvals.json")
	write := func(hosts string) {
		require.NoError(t, os.WriteFile(cfg, []byte(`{"version": 1, "agents": {"test": {"sandbox": {"hosts": [`+hosts+`]}}}}`), 0o600))
	}
	check := func() (string, string) {
		var out, errb bytes.Buffer
		code := run([]string{"execgate", "--config", cfg, "--agent", "test", "check", "--cwd", "/home/agent/project", "--", "npm ci"}, strings.NewReader(""), &out, &errb)
		require.Equal(t, 0, code, errb.String())
		return out.String(), errb.String()
	}
	write(`"registry.npmjs.org"`)
	t.Setenv("GITHUB_TOKEN", "gh_canary")
	out, _ := check()
	assert.Contains(t, out, "confined: runs unasked inside the sandbox (writes the workspace; runs code; downloads through the proxy)\n")
	assert.Contains(t, out, "network: a private loopback of its own; its downloads reach registry.npmjs.org through the proxy, nothing else outside\n")
	// What the shim's grants take out of its environment, said.
	assert.Regexp(t, `(?m)^environment: runs without .*GITHUB_TOKEN.* \(secrets: it reaches the allowed hosts\)$`, out)

	probeLoopback = func() error { return errors.New("no user namespaces") }
	out, _ = check()
	assert.Contains(t, out, "needs more than the sandbox: npm ci downloads from the npm registry, over the network\n")
	pinSandbox(t, true)

	write(`"pypi.org"`)
	out, _ = check()
	assert.Contains(t, out, "needs more than the sandbox: npm ci downloads from the npm registry, over the network\n")

	// An index's password for uv in the environment: the download asks.
	write(`"registry.npmjs.org"`)
	t.Setenv("UV_INDEX_CORP_PASSWORD", "pw")
	out, _ = check()
	assert.Contains(t, out, "needs more than the sandbox: npm ci downloads from the npm registry, over the network\n")
}

// TestCheckSaysNoProxyWithATokenFile: check says, as the shim does, that
// code which could read a registry's token from a file gets no proxy to
// the allowed hosts.
func TestCheckSaysNoProxyWithATokenFile(t *testing.T) {
	checkEnv(t)
	pinSandbox(t, true)
	cfg := filepath.Join(t.TempDir(), "exec-approvals.json")
	require.NoError(t, os.WriteFile(cfg, []byte(`{"version": 1, "agents": {"test": {"sandbox": {"hosts": ["registry.npmjs.org"]}}}}`), 0o600))
	work := t.TempDir()
	check := func() string {
		var out, errb bytes.Buffer
		code := run([]string{"execgate", "--config", cfg, "--agent", "test", "check", "--cwd", work, "--", "python3 repro.py"}, strings.NewReader(""), &out, &errb)
		require.Equal(t, 0, code, errb.String())
		return out.String()
	}
	assert.NotContains(t, check(), "no proxy")
	require.NoError(t, os.WriteFile(filepath.Join(work, ".npmrc"), []byte("//registry.npmjs.org/:_authToken=npm_x\n"), 0o600))
	assert.Contains(t, check(), "network: no proxy to the allowed hosts: a registry's token is in a file it can read (an .npmrc, a pip.conf)\n")
}
