//go:build linux && (amd64 || arm64)

package sandbox

import (
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestSetIDBitsRefused: a confined command cannot make a program set-uid
// or set-gid — by chmod(2), fchmod(2) (Python's os.fchmod) or fchmodat(2)
// (coreutils' chmod) — which Landlock has no right for, while the modes
// ordinary work sets still work; unconfined, the same script sets them.
func TestSetIDBitsRefused(t *testing.T) {
	w := newWorld(t)
	prog := filepath.Join(w.ws, "prog")
	write(t, prog, "#!/bin/sh\n")
	script := `chmod u+s prog; chmod g+s prog; chmod 6755 prog; stat -c %a prog`
	python, _ := exec.LookPath("python3")
	if python != "" {
		script += `; python3 -c 'import os; fd = os.open("prog", os.O_RDONLY); os.fchmod(fd, 0o4755); os.chmod("prog", 0o2755)'; stat -c %a prog`
	}
	o := w.run(t, w.grants(), script)
	if o.stdout != "600\n" && o.stdout != "600\n600\n" {
		t.Fatalf("a confined command set a set-id bit: %+v", o)
	}
	o = w.run(t, w.grants(), `chmod 755 prog && chmod u-w,g+r prog && stat -c %a prog`)
	if o.status != 0 || o.stdout != "555\n" {
		t.Fatalf("an ordinary chmod failed confined: %+v", o)
	}
	// Unconfined, the same calls set them: the test measures the filter.
	if err := os.Chmod(prog, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("/bin/bash", "-c", "cd "+w.ws+" && chmod 6755 prog && stat -c %a prog").CombinedOutput()
	if err != nil || string(out) != "6755\n" {
		t.Skipf("unconfined, the set-id bits cannot be set here either: %v %s", err, out)
	}
}
