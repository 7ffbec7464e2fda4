package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/execgate/execgate/config"
)

// TestNeedsNamedReadsWithCode: a path word outside the workspace is
// granted for reading only while no unread code runs in the command, for
// that code would read everything beneath it (python3 x.py ~ read
// ~/.ssh/id_rsa, confined and unasked). It still runs confined, without
// that grant.
func TestNeedsNamedReadsWithCode(t *testing.T) {
	e := testEngine(t)
	pol := config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000, AutoAllowSafe: true}
	cases := []struct {
		command string
		read    []string
	}{
		{"python3 x.py ~", nil},
		{"python3 x.py ~/", nil},
		{"python3 x.py /", nil},
		{"python3 x.py ../", nil},
		{"python3 x.py --in=/srv/data", nil},
		{"ls ~; python3 x.py", nil},
		{"ls / && ./run.sh", nil},
		{"python3 x.py /usr/share/dict/words", []string{"/usr/share/dict/words"}},
		{"python3 x.py data/in.csv", nil},
		{"ls /", []string{"/"}},
		{"ls /srv/data", []string{"/srv/data"}},
	}
	for _, c := range cases {
		res := e.Evaluate(Request{Command: c.command, Cwd: testWorkspace, Home: testHome, Policy: pol})
		n := NeedsOf(res, testWorkspace, testHome)
		assert.True(t, n.Within(), "%q: %+v", c.command, n)
		assert.Equal(t, c.read, n.Read, "%q: %+v", c.command, n)
	}
}
