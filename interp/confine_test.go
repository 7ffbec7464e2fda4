package interp

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/execgate/execgate/sandbox"
)

// Every way Run starts a shell confines it when asked: a file stdin
// (spawn) and a reader copied through a pipe alike.
func TestRunConfined(t *testing.T) {
	if st := sandbox.Probe(nil); !st.Supported() {
		t.Skipf("cannot confine here: %s", st.Reason)
	}
	ws, outside := t.TempDir(), t.TempDir()
	p, err := sandbox.Prepare(sandbox.Grants{Workspace: ws, WriteWorkspace: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	script := `echo in > ` + filepath.Join(ws, "in") + `; echo out > ` + filepath.Join(outside, "out") + `; cat`
	for name, stdin := range map[string]func() any{
		"file":   func() any { return nil },
		"reader": func() any { return strings.NewReader("from stdin\n") },
	} {
		t.Run(name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			o := Options{Shell: "/bin/bash", Argv: []string{"bash", "-c", script}, Stdout: &stdout, Stderr: &stderr, Confine: p}
			if r, ok := stdin().(*strings.Reader); ok {
				o.Stdin = r
			}
			res, err := Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(filepath.Join(ws, "in")); err != nil {
				t.Fatalf("the workspace write failed: %v (%s)", err, stderr.String())
			}
			if _, err := os.Stat(filepath.Join(outside, "out")); err == nil {
				t.Fatal("wrote outside the workspace")
			}
			if !strings.Contains(stderr.String(), "Permission denied") {
				t.Fatalf("stderr = %q, status %d", stderr.String(), res.ExitStatus)
			}
			if name == "reader" && stdout.String() != "from stdin\n" {
				t.Fatalf("stdout = %q", stdout.String())
			}
		})
	}
}
