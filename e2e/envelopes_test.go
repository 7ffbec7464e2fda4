package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/execgate/execgate/internal/vectors"
	"github.com/execgate/execgate/policy"
)

// The argv each CLI hands the shim is compared with the shapes captured
// from the same version (testdata/envelopes/captured/AGENT@VERSION.json):
// a CLI release that changes its wrapper into something execgate no longer
// recognises fails here with the new shape, the day it ships; one it still
// recognises by what it does is a note. EXECGATE_E2E_UPDATE=1 records new
// shapes (only those execgate recognises).

// volatile are the parts of an argv that change from run to run, and the
// placeholders the fixtures have for them (see internal/vectors.Fill).
var volatile = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`claude-[0-9a-f]+-cwd`), "claude-{{ID}}-cwd"},
	{regexp.MustCompile(`snapshot-(bash|zsh)-[0-9]+-[a-z0-9]+\.sh`), "snapshot-$1-{{ID}}.sh"},
	{regexp.MustCompile(`gemini-shell-[A-Za-z0-9]+`), "gemini-shell-{{ID}}"},
	{regexp.MustCompile(`PATH_END_[a-z0-9]+`), "PATH_END_{{ID}}"},
	{regexp.MustCompile(`CLAUDE_CODE_END_[a-z0-9]+`), "CLAUDE_CODE_END_{{ID}}"},
	{regexp.MustCompile(`(?m)^export PATH=.*$`), "export PATH={{PATH}}"},
}

// normalize turns a captured argv into a fixture shape; exe is the agent
// CLI's own executable, which Claude Code writes into its snapshot.
func normalize(argv []string, w *world, exe, payload string) []string {
	quoted := "'" + strings.ReplaceAll(payload, "'", `'"'"'`) + "'"
	olds := []string{quoted, "{{CLAUDE}}", w.home, "{{HOME}}"}
	if real, err := filepath.EvalSymlinks(exe); err == nil {
		olds = append([]string{real, "{{CLAUDE_EXE}}"}, olds...)
	}
	r := strings.NewReplacer(olds...)
	out := make([]string, len(argv))
	for i, a := range argv {
		a = r.Replace(a)
		if tmp := strings.TrimSuffix(os.TempDir(), "/"); tmp != "" {
			a = strings.ReplaceAll(a, tmp+"/", "{{TMP}}/")
		}
		for _, v := range volatile {
			a = v.re.ReplaceAllString(a, v.repl)
		}
		if a == payload {
			a = "{{PAYLOAD}}"
		} else {
			a = replaceLine(a, payload)
		}
		out[i] = a
	}
	return out
}

// replaceLine replaces payload where it stands alone on a line (Gemini's
// wrapper puts it so).
func replaceLine(s, payload string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		if l == payload {
			lines[i] = "{{PAYLOAD}}"
		}
	}
	return strings.Join(lines, "\n")
}

// fixtureLock serialises updates of the fixture files.
var fixtureLock sync.Mutex

func fixturePath(p pin) string {
	return filepath.Join("..", "testdata", "envelopes", "captured", p.Name+"@"+p.Version+".json")
}

// checkEnvelopes compares the argvs the shims were given with the captured
// shapes. A shape not captured yet is drift: when execgate recognises it
// all the same (an envelope that unwraps to the payload, a start-up
// command recognised by what it does) it is a note in the output; when it
// does not, the test fails with the new shape and why.
func checkEnvelopes(t *testing.T, w *world, a agentKind, p pin, bin, route, command string) {
	t.Helper()
	argvs := w.argvs()
	if route != routeShim && route != routeZsh && route != routeZshShim {
		if len(argvs) > 0 {
			t.Errorf("%s on the %s route ran the shim %d times, first %s", a.name, route, len(argvs), quoteArgv(argvs[0]))
		}
		return
	}
	if len(argvs) == 0 {
		t.Fatalf("%s never ran the shim", a.name)
	}
	envs := w.argvEnvs()
	fixtureLock.Lock()
	defer fixtureLock.Unlock()
	path := fixturePath(p)
	f, err := vectors.ReadCaptured(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	f.Agent, f.Version = p.Name, p.Version
	var fresh, unrecognised []string
	for i, argv := range argvs {
		shape := normalize(argv, w, bin, command)
		if slices.ContainsFunc(f.Shapes, func(s vectors.CapturedShape) bool { return slices.Equal(s.Argv, shape) }) {
			continue
		}
		raw, _ := json.MarshalIndent(shape, "", "  ")
		fresh = append(fresh, string(raw))
		f.Shapes = append(f.Shapes, vectors.CapturedShape{Seen: fmt.Sprintf("%s route, %q", route, command), Argv: shape})
		if route != routeZsh { // the recording zsh runs no execgate
			if why := recognised(w, a, bin, argv, envs[i], command); why != "" {
				unrecognised = append(unrecognised, string(raw)+"\n  not recognised: "+why)
			}
		}
	}
	if len(fresh) == 0 {
		return
	}
	if os.Getenv("EXECGATE_E2E_UPDATE") == "1" && len(unrecognised) == 0 {
		var buf bytes.Buffer
		enc := json.NewEncoder(&buf)
		enc.SetEscapeHTML(false) // shell text: keep <, > and & readable
		enc.SetIndent("", "  ")
		must(t, enc.Encode(f))
		raw := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
		must(t, os.MkdirAll(filepath.Dir(path), 0o755))
		must(t, os.WriteFile(path, append(raw, '\n'), 0o644))
		t.Logf("recorded %d new shapes in %s", len(fresh), path)
		return
	}
	if len(unrecognised) > 0 {
		t.Errorf("%s %s handed the shim %d shapes that execgate does not recognise as its plumbing (its wrapper changed):\n%s",
			a.name, p.Version, len(unrecognised), strings.Join(unrecognised, "\n"))
		return
	}
	t.Logf("note: %s %s handed the shim %d shapes not in %s; execgate recognises each by what it does (EXECGATE_E2E_UPDATE=1 records them):\n%s",
		a.name, p.Version, len(fresh), path, strings.Join(fresh, "\n"))
}

// recognised says why execgate does not take argv, which the agent handed
// the shim with environment env, for its plumbing ("" when it does): an
// envelope must unwrap to exactly the model's command, anything else must
// be the agent's start-up command. It asks the policy package as the shim
// does, with the environment the shim had and bin as the agent's own
// executable (the shim's parent).
func recognised(w *world, a agentKind, bin string, argv, env []string, command string) string {
	program, params, ok := shellProgram(argv)
	if !ok {
		return "no -c program in it"
	}
	getenv := func(k string) string {
		for _, kv := range env {
			if v, ok := strings.CutPrefix(kv, k+"="); ok {
				return v
			}
		}
		return ""
	}
	d := policy.DialectBash
	if filepath.Base(argv[0]) == "zsh" {
		d = policy.DialectZsh
	}
	trust := policy.NewTrust(nil, w.home, getenv).WithAgentExecutable(bin)
	if e, ok := trust.UnwrapAs(program, params, d); ok {
		if e.Payload != command {
			return fmt.Sprintf("unwrapped to %q, not the model's command", e.Payload)
		}
		return ""
	}
	if _, ok := trust.HarnessAs(program, params, a.policy, d); ok {
		return ""
	}
	if why := trust.HarnessProblem(program, d); why != "" {
		return why
	}
	return "neither an envelope nor a start-up command execgate knows"
}

// shellProgram takes a shim argv apart: the -c program and the words
// after it, past the options bash reads before it (-l, -e …).
func shellProgram(argv []string) (string, []string, bool) {
	i := 1
	for i < len(argv) && strings.HasPrefix(argv[i], "-") {
		i++
	}
	if i >= len(argv) || !slices.Contains(argv[1:i], "-c") {
		return "", nil, false
	}
	return argv[i], argv[i+1:], true
}
