package policy

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// gtfoHarmful are the GTFOBins functions that run code, load libraries,
// write, upload or download: none may be allowed under `PROGRAM **`.
var gtfoHarmful = map[string]bool{
	"shell": true, "command": true, "reverse-shell": true, "bind-shell": true,
	"library-load": true, "file-write": true, "upload": true, "download": true,
}

// Ceilings for TestGTFOBins: both reached zero and stay there.
const (
	gtfoMaxAllowed = 0
	gtfoMaxSafe    = 0
)

// TestGTFOBins measures execgate against the recipes of GTFOBins
// (shared/corpora/gtfobins.tsv, GPL-3.0, measured there and never copied
// here): under an allowlist `NAME **` for every program execgate models, a
// recipe that spawns a shell, runs a command, loads a library, writes,
// uploads or downloads must not be allowed (a wildcard covers words, not
// effects), and no recipe but a file read may be called safe.
func TestGTFOBins(t *testing.T) {
	path := sharedCorpus("gtfobins.tsv")
	if path == "" {
		t.Skip("shared/corpora/gtfobins.tsv is not present: nothing to measure")
	}
	e := testEngine(t)
	progs := e.rules.modelledPrograms()
	pats := make([]string, len(progs))
	for i, p := range progs {
		pats[i] = p + " **"
	}
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1, AutoAllowSafe: true}
	allow := pattern.NewMatcher(entries(pats...), fakePath)
	safe, allowed := 0, 0
	readTSV(t, path, func(line int, cols []string) {
		if len(cols) != 3 {
			t.Errorf("gtfobins.tsv:%d: %d columns", line, len(cols))
			return
		}
		var cmd string
		if err := json.Unmarshal([]byte(cols[2]), &cmd); err != nil {
			t.Errorf("gtfobins.tsv:%d: %v", line, err)
			return
		}
		res := e.Evaluate(Request{Command: cmd, Cwd: testWorkspace, Home: testHome, Policy: pol, Allow: allow})
		if cols[0] != "file-read" && res.Risk == Safe {
			safe++
			t.Logf("safe: %s %s: %q", cols[0], cols[1], cmd)
		}
		if gtfoHarmful[cols[0]] && res.Decision == Allow {
			allowed++
			t.Logf("allowed: %s %s: %q", cols[0], cols[1], cmd)
		}
	})
	t.Logf("GTFOBins: %d harmful recipes allowed under PROGRAM ** for %d modelled programs; %d recipes other than file reads called safe", allowed, len(progs), safe)
	assert.LessOrEqual(t, allowed, gtfoMaxAllowed, "harmful recipes allowed")
	assert.LessOrEqual(t, safe, gtfoMaxSafe, "recipes other than file reads called safe")
}
