package shim

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/interp"
)

// TestFinishedStatusLost: a command whose exit status could not be
// collected ends the shim with a failure and one line saying why, and the
// audit log records that status and the reason, never a 0.
func TestFinishedStatusLost(t *testing.T) {
	state := t.TempDir()
	env := map[string]string{"XDG_STATE_HOME": state, "HOME": t.TempDir()}
	stderr, ferr := os.Create(filepath.Join(t.TempDir(), "stderr"))
	require.NoError(t, ferr)
	defer stderr.Close()
	s := newSession(Options{Stderr: stderr, Getenv: func(k string) string { return env[k] }})
	err := fmt.Errorf("wait for /bin/bash: %w: no child processes", interp.ErrStatusLost)
	status, sig := s.finished(interp.Result{ExitStatus: interp.StatusLost, Duration: time.Millisecond}, err)
	assert.NotZero(t, status)
	assert.Zero(t, sig)
	said, ferr := os.ReadFile(stderr.Name())
	require.NoError(t, ferr)
	assert.Equal(t, "execgate: "+err.Error()+"\n", string(said))

	f, ferr := os.Open(filepath.Join(state, "execgate", "audit.jsonl"))
	require.NoError(t, ferr)
	defer f.Close()
	sc := bufio.NewScanner(f)
	require.True(t, sc.Scan())
	var ev Event
	require.NoError(t, json.Unmarshal(sc.Bytes(), &ev))
	require.NotNil(t, ev.ExitStatus)
	assert.Equal(t, status, *ev.ExitStatus)
	assert.Equal(t, err.Error(), ev.Message)
}
