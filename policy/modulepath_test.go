package policy

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestModulePathInWorkspace: PYTHONPATH=src pytest (and NODE_PATH,
// PERL5LIB, RUBYLIB) puts the workspace's own directories first on the
// module path: the modules loaded first are the workspace's code, which
// a confined command runs anyway, so it needs review and runs confined
// rather than being dangerous. A directory that resolves outside the
// workspace — written so, or through a link the repository ships — stays
// dangerous, proven by python loading a planted module through the link;
// and the reason stays firm: an allowlist entry does not cover it.
func TestModulePathInWorkspace(t *testing.T) {
	w := newWorld(t)
	w.mkdir(filepath.Join(w.ws, "src"))
	w.mkdir(filepath.Join(w.ws, "tests"))
	w.write(filepath.Join(w.home, "evil", "json.py"), "print('CANARY-PLANTED')\n")
	w.link("../../evil", "vendor")
	if _, err := exec.LookPath("python3"); err == nil {
		require.Contains(t, w.bash("PYTHONPATH=vendor python3 -c 'import json'"), "CANARY-PLANTED")
	}

	for _, cmd := range []string{
		"PYTHONPATH=src python3 -m pytest -q",
		"PYTHONPATH=. pytest -q tests/",
		"PYTHONPATH=src:tests python3 -m pytest",
		`PYTHONPATH="src" python3 x.py`,
		"PYTHONPATH=src:$PYTHONPATH pytest",
		"PYTHONPATH=" + filepath.Join(w.ws, "src") + " pytest",
		"NODE_PATH=src node scripts/x.js",
		"PERL5LIB=src prove -r t",
		"cd tests && PYTHONPATH=.. python3 -m pytest",
	} {
		res := w.analyze(cmd)
		require.Equal(t, NeedsReview, res.Risk, "%q: %v", cmd, res.Reasons)
		assert.Contains(t, strings.Join(res.Reasons, " | "), "first on", cmd)
		n := NeedsOf(res, w.ws, w.home)
		assert.True(t, n.Within(), "%q: %+v", cmd, n)
		assert.True(t, n.RunCode, "%q: %+v", cmd, n)
	}
	for _, cmd := range []string{
		"PYTHONPATH=vendor python3 -c 'import json'",
		"PYTHONPATH=src:vendor pytest",
		"PYTHONPATH=/tmp python3 x.py",
		"PYTHONPATH=../other pytest",
		"PYTHONPATH=~/evil pytest",
		"PYTHONPATH=src: pytest",
		"PYTHONPATH=$X pytest",
		"PYTHONPATH=src$(id) pytest",
		"PYTHONPATH=src* pytest",
		"PYTHONPATH+=:src pytest",
		"cd /tmp && PYTHONPATH=src pytest",
		"PYTHONHOME=src python3 x.py",
		"LD_LIBRARY_PATH=src ./app",
	} {
		res := w.analyze(cmd)
		assert.Equal(t, Dangerous, res.Risk, "%q: %v", cmd, res.Reasons)
	}
	res := w.evaluate("PYTHONPATH=src aws s3 ls", "aws **")
	assert.NotEqual(t, Allow, res.Decision, "an allowlist entry covered a module path: %v", res.Reasons)
}
