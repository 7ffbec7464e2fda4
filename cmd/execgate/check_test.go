package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

var updateGolden = flag.Bool("update", false, "rewrite golden files")

// checkEnv pins what check reads from the environment.
func checkEnv(t *testing.T) {
	t.Helper()
	cfgEnv(t)
	pinSandbox(t, true)
	t.Setenv("HOME", "/home/agent")
	t.Setenv("NO_COLOR", "1")
}

func checkRun(t *testing.T, stdin string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	full := append([]string{"execgate", "--config", "../../testdata/check/config.json", "--agent", "test", "check", "--cwd", "/home/agent/project"}, args...)
	code = run(full, strings.NewReader(stdin), &out, &errb)
	return code, out.String(), errb.String()
}

func goldenCommands(t *testing.T) []string {
	t.Helper()
	f, err := os.Open("../../testdata/check/commands.txt")
	require.NoError(t, err)
	defer f.Close()
	var cmds []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var c string
		require.NoError(t, json.Unmarshal([]byte(line), &c), line)
		cmds = append(cmds, c)
	}
	return cmds
}

// TestCheckGolden pins the explanation (text and JSON) of a set of
// commands: what a person and a script see is the product.
func TestCheckGolden(t *testing.T) {
	checkEnv(t)
	var text, js bytes.Buffer
	for _, c := range goldenCommands(t) {
		code, out, errOut := checkRun(t, "", "--", c)
		require.Equal(t, 0, code, "check %q: %s", c, errOut)
		require.Empty(t, errOut)
		fmt.Fprintf(&text, "$ execgate check -- %q\n%s\n", c, out)
		code, out, errOut = checkRun(t, "", "--json", "--", c)
		require.Equal(t, 0, code, errOut)
		js.WriteString(out)
		var obj map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &obj), "one JSON object per command")
	}
	compareGolden(t, "../../testdata/check/explain.golden", text.Bytes())
	compareGolden(t, "../../testdata/check/json.golden", js.Bytes())
}

func compareGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *updateGolden {
		require.NoError(t, os.WriteFile(path, got, 0o644))
		return
	}
	want, err := os.ReadFile(path)
	require.NoError(t, err, "run go test ./cmd/execgate -run TestCheckGolden -update")
	assert.Equal(t, string(want), string(got), "golden file %s", filepath.Base(path))
}

// TestCheckJSONL answers one object per input line, an error object for a
// malformed line, and exits 1 when any line was malformed.
func TestCheckJSONL(t *testing.T) {
	checkEnv(t)
	code, out, errOut := checkRun(t, "\"ls\"\nnot json\n\"sudo reboot\"\n", "--jsonl")
	assert.Equal(t, exitError, code)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	require.Len(t, lines, 3)
	assert.Contains(t, lines[0], `"decision":"allow"`)
	assert.Contains(t, lines[1], `"error":"line 2: not a JSON string`)
	assert.Contains(t, lines[2], `"risk":"dangerous"`)
	assert.Contains(t, errOut, "line 2")

	code, out, _ = checkRun(t, "\"git status\"\n", "--jsonl")
	assert.Equal(t, 0, code)
	assert.Contains(t, out, `"allowlist":"git **"`)
}

// TestCheckExitCodes maps decisions to 0/1/3 only with --exit-code, and
// usage errors to 2.
func TestCheckExitCodes(t *testing.T) {
	checkEnv(t)
	for cmd, want := range map[string]int{"git log": 0, "rm -rf /": exitAsk, "terraform destroy": exitDeny} {
		code, _, errOut := checkRun(t, "", "--exit-code", "--", cmd)
		assert.Equal(t, want, code, "%q: %s", cmd, errOut)
		code, _, _ = checkRun(t, "", "--", cmd)
		assert.Equal(t, 0, code, "%q without --exit-code", cmd)
	}
	code, _, errOut := checkRun(t, "")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, "execgate: check needs a command: execgate check -- 'COMMAND'\n", errOut)
	code, _, _ = checkRun(t, "", "--jsonl", "--", "ls")
	assert.Equal(t, exitUsage, code)
	code, _, errOut = checkRun(t, "", "--bogus")
	assert.Equal(t, exitUsage, code)
	assert.Equal(t, 1, strings.Count(errOut, "\n"), "one line: %q", errOut)
}

// TestCheckCorruptConfig reports a corrupt config in one line and judges
// deny, as the shim would refuse: never the built-in defaults.
func TestCheckCorruptConfig(t *testing.T) {
	checkEnv(t)
	path := filepath.Join(t.TempDir(), "exec-approvals.json")
	require.NoError(t, os.WriteFile(path, []byte(`{"version": 1, "defaults": {"security": "full"`), 0o600))
	var out, errb bytes.Buffer
	code := run([]string{"execgate", "--config", path, "check", "--json", "--", "rm -rf ~"}, strings.NewReader(""), &out, &errb)
	assert.Equal(t, 0, code)
	assert.Equal(t, 1, strings.Count(errb.String(), "\n"), "one line: %q", errb.String())
	assert.Contains(t, errb.String(), "fix it or run 'execgate config check'")
	assert.Contains(t, out.String(), `"decision":"deny"`)
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	assert.Equal(t, `{"version": 1, "defaults": {"security": "full"`, string(raw), "a corrupt config is never rewritten by a read")
}

// TestCheckJSONLLongLines reads lines of any length: a line over the cap is
// skipped with an error object of its own and the batch goes on, so that
// output line N still answers input line N.
func TestCheckJSONLLongLines(t *testing.T) {
	checkEnv(t)
	long := func(n int) string { return `"echo ` + strings.Repeat("x", n) + `"` }
	for _, tc := range []struct {
		name  string
		input string
		want  []string // a substring of each output line
		code  int
	}{
		{"70 KiB line", long(70<<10) + "\n", []string{`"decision":"allow"`}, 0},
		{"3 MiB line between good lines", "\"ls\"\n" + long(3<<20) + "\n\"sudo reboot\"\n",
			[]string{`"decision":"allow"`, `"error":"line 2: ` + fmt.Sprint(3<<20+8) + ` bytes, more than the`, `"risk":"dangerous"`}, exitError},
		{"line just over the cap", long(maxLineBytes-1) + "\n\"ls\"\n", []string{`"error":"line 1: `, `"decision":"allow"`}, exitError},
		{"line at the cap is read", `"` + strings.Repeat(" ", maxLineBytes-4) + `ls"` + "\r\n", []string{`"risk":"needs-review"`}, 0},
		{"last line without newline", "\"ls\"\n\"sudo reboot\"", []string{`"decision":"allow"`, `"risk":"dangerous"`}, 0},
		{"CRLF", "\"ls\"\r\n\"sudo reboot\"\r\n", []string{`"decision":"allow"`, `"risk":"dangerous"`}, 0},
		{"empty line", "\"ls\"\n\n\"ls\"\n", []string{`"decision":"allow"`, `"error":"line 2: not a JSON string`, `"decision":"allow"`}, exitError},
		{"no input", "", nil, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, out, errOut := checkRun(t, tc.input, "--jsonl")
			assert.Equal(t, tc.code, code, errOut)
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if out == "" {
				lines = nil
			}
			require.Len(t, lines, len(tc.want))
			for i, w := range tc.want {
				assert.Contains(t, lines[i], w, "output line %d", i+1)
				var obj map[string]any
				assert.NoError(t, json.Unmarshal([]byte(lines[i]), &obj), "output line %d is one JSON object", i+1)
			}
		})
	}
}

// TestCheckShellZsh: --shell zsh judges as the zsh shim does; the same
// text is read by bash otherwise, and an unknown shell is a usage error.
func TestCheckShellZsh(t *testing.T) {
	checkEnv(t)
	code, out, errOut := checkRun(t, "", "--exit-code", "--shell", "zsh", "--", "echo ${(e)x}")
	assert.Equal(t, 1, code, errOut)
	assert.Contains(t, out, "zsh: ")
	code, _, errOut = checkRun(t, "", "--exit-code", "--", "echo ${(e)x}")
	assert.NotEqual(t, 0, code, "bash reads ${(e)x} as a bad substitution: %s", errOut)
	code, _, errOut = checkRun(t, "", "--exit-code", "--shell", "zsh", "--", "git status")
	assert.Equal(t, 0, code, errOut)
	code, _, errOut = checkRun(t, "", "--shell", "fish", "--", "ls")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "want bash or zsh")
}
