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
)

// The argv each CLI hands the shim is compared with the shapes captured
// from the same version (testdata/envelopes/captured/AGENT@VERSION.json):
// a CLI release that changes its wrapper fails here with the new shape,
// the day it ships. EXECGATE_E2E_UPDATE=1 records new shapes instead.

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
// shapes.
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
	fixtureLock.Lock()
	defer fixtureLock.Unlock()
	path := fixturePath(p)
	f, err := vectors.ReadCaptured(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	f.Agent, f.Version = p.Name, p.Version
	var fresh []string
	for _, argv := range argvs {
		shape := normalize(argv, w, bin, command)
		if slices.ContainsFunc(f.Shapes, func(s vectors.CapturedShape) bool { return slices.Equal(s.Argv, shape) }) {
			continue
		}
		raw, _ := json.MarshalIndent(shape, "", "  ")
		fresh = append(fresh, string(raw))
		f.Shapes = append(f.Shapes, vectors.CapturedShape{Seen: fmt.Sprintf("%s route, %q", route, command), Argv: shape})
	}
	if len(fresh) == 0 {
		return
	}
	if os.Getenv("EXECGATE_E2E_UPDATE") == "1" {
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
	t.Errorf("%s %s handed the shim %d shapes not in %s (its wrapper changed: check that execgate still recognises it exactly, then record it with EXECGATE_E2E_UPDATE=1):\n%s",
		a.name, p.Version, len(fresh), path, strings.Join(fresh, "\n"))
}
