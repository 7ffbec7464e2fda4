package e2e

import (
	"os"
	"testing"
)

func TestExplore(t *testing.T) {
	enabled(t)
	a := agentByName(os.Getenv("AGENT"))
	bin := install(t, readPins(t)[a.name])
	w := newWorld(t)
	m := newMockModel(t, a.api, "git status")
	env := a.wire(t, w, os.Getenv("ROUTE"), m)
	r := w.runAgent(a.argv(bin), env...)
	t.Logf("status %d in %v\nstdout %s\nstderr %s", r.status, r.elapsed, r.stdout, r.stderr)
	for _, av := range w.argvs() {
		t.Logf("argv: %s", quoteArgv(av))
	}
	for _, ev := range w.audit() {
		t.Logf("audit: %+v", ev)
	}
	t.Logf("results: %q", m.toolResults())
	t.Logf("requests:\n%s", m.describe())
}
