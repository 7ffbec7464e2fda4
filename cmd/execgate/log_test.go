package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/shim"
)

// TestWriteEventWidth: a 5 KB command (an unrecognised prologue) is one
// screen line in `execgate log`, saying how much was cut; --full (width 0)
// shows it whole; a newline shows as \n either way.
func TestWriteEventWidth(t *testing.T) {
	long := "SNAPSHOT_FILE=/tmp/x\n" + strings.Repeat("echo abc; ", 500)
	ev := shim.Event{Time: time.Unix(0, 0), Event: shim.EventDenied, Agent: "claude-code", Command: long, Risk: "needs-review", DecidedBy: "fallback"}
	var b bytes.Buffer
	require.NoError(t, writeEvent(&b, ev, logWidth))
	line := b.String()
	assert.Equal(t, 1, strings.Count(line, "\n"))
	assert.Less(t, len(line), 400)
	assert.Contains(t, line, `SNAPSHOT_FILE=/tmp/x\necho abc;`)
	assert.Contains(t, line, "… (5021 bytes; --full shows all)")

	b.Reset()
	require.NoError(t, writeEvent(&b, ev, 0))
	assert.Contains(t, b.String(), strings.Repeat("echo abc; ", 500))
	assert.NotContains(t, b.String(), "--full")

	b.Reset()
	ev.Command = "git status"
	require.NoError(t, writeEvent(&b, ev, logWidth))
	assert.True(t, strings.HasSuffix(b.String(), "git status\n"), b.String())
}
