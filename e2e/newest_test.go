package e2e

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestNewestReleases is for a person to run before a release:
//
//	EXECGATE_E2E=1 EXECGATE_E2E_NEWEST=1 go test ./e2e -run TestNewestReleases -v
//
// It asks npm for each agent CLI's newest release and, where that is not
// the pinned one, runs that agent's end-to-end tests against it (a child
// `go test` with EXECGATE_E2E_VERSION_<NAME>), then reports what drifted:
// the tests that failed, and the notes about new shapes execgate still
// recognises. It never fails on what it finds — the pins in agents.json
// are what CI holds execgate to; moving them is a deliberate change, made
// with EXECGATE_E2E_UPDATE=1 once the newest release passes.
func TestNewestReleases(t *testing.T) {
	enabled(t)
	if os.Getenv("EXECGATE_E2E_NEWEST") != "1" {
		t.Skip("trying the agents' newest releases is off: EXECGATE_E2E_NEWEST=1 turns it on")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Skip("npm is not installed: no registry to ask for the newest releases")
	}
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go is not installed: the agents' tests cannot be run again")
	}
	pins := readPins(t)
	var report []string
	for _, a := range agents {
		p := pins[a.name]
		newest, err := newestVersion(t.Context(), npm, p.Package)
		if err != nil {
			report = append(report, fmt.Sprintf("%-7s pinned %s; the registry did not answer: %v", a.name, p.Version, err))
			continue
		}
		if newest == p.Version {
			report = append(report, fmt.Sprintf("%-7s pinned %s is the newest release", a.name, p.Version))
			continue
		}
		var lines []string
		for _, run := range newestRuns(a.name) {
			lines = append(lines, runNewest(t, goBin, a.name, newest, run)...)
		}
		report = append(report, fmt.Sprintf("%-7s pinned %s, newest %s:", a.name, p.Version, newest))
		report = append(report, lines...)
	}
	t.Logf("the agents' newest releases:\n%s", strings.Join(report, "\n"))
}

// newestRuns are the -run patterns of one agent's end-to-end tests.
func newestRuns(name string) []string {
	runs := []string{"^TestAgents$/^" + name + "$"}
	if name == "claude" {
		runs = append(runs, "^TestClaudeVariants$", "^TestClaudeZshShapes$", "^TestClaudeZshShim$")
	}
	return runs
}

// newestVersion is the version npm's "latest" tag names.
func newestVersion(ctx context.Context, npm, pkg string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, npm, "view", pkg, "version").Output()
	if err != nil {
		return "", fmt.Errorf("npm view %s version: %w", pkg, err)
	}
	v := strings.TrimSpace(string(out))
	if v == "" || strings.ContainsAny(v, " \n/") {
		return "", fmt.Errorf("npm view %s version: %q is no version", pkg, v)
	}
	return v, nil
}

// testEvent is one line of `go test -json`.
type testEvent struct {
	Action string
	Test   string
	Output string
}

// runNewest runs the tests matching run against version of agent name in
// a child `go test`, and sums up what came of them, one line each.
func runNewest(t *testing.T, goBin, name, version, run string) []string {
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, goBin, "test", "-json", "-count=1", "-timeout=30m", "-run", run, ".")
	cmd.Env = slices.DeleteFunc(os.Environ(), func(kv string) bool {
		return strings.HasPrefix(kv, "EXECGATE_E2E_NEWEST=") || strings.HasPrefix(kv, "EXECGATE_E2E_UPDATE=") ||
			strings.HasPrefix(kv, "EXECGATE_E2E_VERSION_")
	})
	cmd.Env = append(cmd.Env, "EXECGATE_E2E=1", "EXECGATE_E2E_VERSION_"+strings.ToUpper(name)+"="+version)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, runErr := cmd.Output()
	var failed, skipped, notes []string
	passed := 0
	outputs := map[string][]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var ev testEvent
		if json.Unmarshal(sc.Bytes(), &ev) != nil || ev.Test == "" {
			continue
		}
		switch ev.Action {
		case "output":
			outputs[ev.Test] = append(outputs[ev.Test], ev.Output)
			if strings.Contains(ev.Output, "note: ") {
				notes = append(notes, ev.Test+": "+strings.TrimSpace(ev.Output))
			}
		case "pass":
			passed++
		case "fail":
			if !hasSubtestFailure(ev.Test, failed) {
				failed = append(failed, ev.Test)
			}
		case "skip":
			skipped = append(skipped, ev.Test+": "+skipReason(outputs[ev.Test]))
		}
	}
	lines := []string{fmt.Sprintf("  %s: %d passed, %d failed, %d skipped", run, passed, len(failed), len(skipped))}
	for _, f := range failed {
		lines = append(lines, "    FAIL "+f+": "+firstProblem(outputs[f]))
	}
	for _, s := range skipped {
		lines = append(lines, "    skip "+s)
	}
	for _, n := range notes {
		lines = append(lines, "    "+n)
	}
	if runErr != nil && len(failed) == 0 {
		lines = append(lines, fmt.Sprintf("    go test: %v: %s", runErr, strings.TrimSpace(stderr.String())))
	}
	return lines
}

// hasSubtestFailure reports whether failed already names a test under
// test: a parent fails with its subtest, which says more.
func hasSubtestFailure(test string, failed []string) bool {
	return slices.ContainsFunc(failed, func(f string) bool { return strings.HasPrefix(f, test+"/") })
}

// skipReason is the line a skipped test gave.
func skipReason(output []string) string {
	for _, l := range output {
		if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "=== ") && !strings.HasPrefix(l, "--- ") {
			return l
		}
	}
	return "no reason given"
}

// firstProblem is the first line of a failed test's output that says
// what went wrong.
func firstProblem(output []string) string {
	for _, l := range output {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "=== ") || strings.HasPrefix(l, "--- ") {
			continue
		}
		if len(l) > 300 {
			l = l[:300] + "…"
		}
		return l
	}
	return "see the test's output"
}
