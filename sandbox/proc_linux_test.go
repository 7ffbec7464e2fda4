//go:build linux && (amd64 || arm64)

package sandbox

import (
	"os/exec"
	"strconv"
	"strings"
	"testing"
)

// Another process's environment (the agent's API keys, a CI runner's
// secrets) and memory map stay out of reach of a confined command, run
// by root too: Landlock let root's CAP_SYS_ADMIN and CAP_PERFMON read
// them. Checked against the same reads unconfined.
func TestOtherProcessEnvironFails(t *testing.T) {
	w := newWorld(t)
	victim := exec.Command("/bin/sleep", "60")
	victim.Env = []string{"SECRET_TOKEN=CANARY-ENVIRON"}
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		victim.Process.Kill()
		victim.Wait()
	}()
	pid := strconv.Itoa(victim.Process.Pid)
	script := `tr '\0' '\n' < /proc/` + pid + `/environ; grep -c sleep /proc/` + pid + `/maps`
	out, err := exec.Command("/bin/bash", "-c", script).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "CANARY-ENVIRON") {
		t.Skipf("unconfined, this process cannot read it either: %v %s", err, out)
	}
	o := w.run(t, w.grants(), script)
	if strings.Contains(o.stdout, "CANARY") || o.status == 0 {
		t.Fatalf("a confined command read another process's environment or map: %+v", o)
	}
	// And what a confined program needs of its own still works.
	o = w.run(t, w.grants(), `head -c 100 /proc/self/maps >/dev/null && cat /proc/self/environ | tr '\0' '\n' | grep -c ^HOME=`)
	if o.status != 0 || o.stdout != "1\n" {
		t.Fatalf("a confined command cannot read its own /proc: %+v", o)
	}
}
