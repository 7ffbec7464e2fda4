package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/internal/rsyslogtest"
	"github.com/execgate/execgate/shim"
)

// TestLogExportCommand: `execgate log --export` (real processes: execgate
// runs execgate-export from beside itself) sends the log's events to the
// real rsyslogd the configuration names, once; says per collector what it
// sent; and, with the collector gone, fails with one line and keeps the
// rest for the next run.
func TestLogExportCommand(t *testing.T) {
	port := rsyslogtest.FreePort(t)
	r := rsyslogtest.Start(t, port)
	bin := t.TempDir()
	for name, pkg := range map[string]string{"execgate": "../execgate", "execgate-export": "."} {
		out, err := exec.Command("go", "build", "-o", filepath.Join(bin, name), pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
	}
	root := t.TempDir()
	cfg := filepath.Join(root, "exec-approvals.json")
	target := fmt.Sprintf("tcp://127.0.0.1:%d", port)
	require.NoError(t, os.WriteFile(cfg, []byte(`{"version": 1, "audit": {"export": {"syslog": {"address": "`+target+`", "tag": "eg-test"}}}}`), 0o600))
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + root, "XDG_STATE_HOME=" + filepath.Join(root, "state"), "EXECGATE_CONFIG=" + cfg}
	log := &shim.AuditLog{Path: filepath.Join(root, "state", "execgate", "audit.jsonl")}
	for i := range 3 {
		require.NoError(t, log.Append(shim.Event{Time: time.Now(), Event: shim.EventFinished, ID: fmt.Sprint("id", i), Command: "make test"}))
	}
	export := func() (string, string, int) {
		t.Helper()
		cmd := exec.Command(filepath.Join(bin, "execgate"), "log", "--export")
		cmd.Env = env
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		cmd.Run()
		return out.String(), errb.String(), cmd.ProcessState.ExitCode()
	}
	out, errs, code := export()
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "syslog "+target+": sent 3 events\n", out)
	got := r.Lines(t, 3)
	assert.True(t, strings.HasPrefix(got[0], "86|eg-test|-|exec.finished|"), got[0])

	out, _, code = export()
	assert.Equal(t, 0, code)
	assert.Equal(t, "syslog "+target+": sent 0 events\n", out)

	// The collector gone: one line, status 1, and the event waits.
	require.NoError(t, log.Append(shim.Event{Time: time.Now(), Event: shim.EventDenied, ID: "late", Command: "rm -rf ~"}))
	cmd := exec.Command(filepath.Join(bin, "execgate"), "log", "--export")
	cmd.Env = append(env[:3:3], "EXECGATE_CONFIG="+filepath.Join(root, "elsewhere.json"))
	require.NoError(t, os.WriteFile(filepath.Join(root, "elsewhere.json"), []byte(`{"version": 1, "audit": {"export": {"syslog": {"address": "tcp://127.0.0.1:1"}}}}`), 0o600))
	var errb bytes.Buffer
	cmd.Stderr = &errb
	err := cmd.Run()
	require.Error(t, err)
	assert.Equal(t, 1, cmd.ProcessState.ExitCode())
	assert.Equal(t, 1, strings.Count(errb.String(), "\n"), errb.String())
	assert.Contains(t, errb.String(), "execgate-export: syslog tcp://127.0.0.1:1: ")
	assert.Contains(t, errb.String(), "the rest waits in the local log for the next run")
	out, errs, code = export()
	require.Equal(t, 0, code, errs)
	assert.Equal(t, "syslog "+target+": sent 1 events\n", out)
	assert.Contains(t, r.Lines(t, 4)[3], `"id":"late"`)
}

// TestOnlyExportLinksOpenTelemetry: the shim and the CLI (every hook call)
// start for every agent command; the OpenTelemetry SDK's packages, and
// gRPC's and protobuf's with them, belong to execgate-export alone.
func TestOnlyExportLinksOpenTelemetry(t *testing.T) {
	for _, pkg := range []string{"../execgate", "../execgate-shell", "."} {
		out, err := exec.Command("go", "list", "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		heavy := 0
		for _, dep := range strings.Fields(string(out)) {
			if strings.HasPrefix(dep, "go.opentelemetry.io/") || strings.HasPrefix(dep, "google.golang.org/") {
				heavy++
			}
		}
		if pkg == "." {
			assert.NotZero(t, heavy, "execgate-export sends with the SDK")
			continue
		}
		assert.Zero(t, heavy, "%s links OpenTelemetry, gRPC or protobuf packages", pkg)
	}
}
