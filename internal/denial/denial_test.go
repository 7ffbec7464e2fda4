package denial

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestLine(t *testing.T) {
	assert.Equal(t, "execgate: denied: matches denylist pattern \"rm **\"", Line(`matches denylist pattern "rm **"`))
	// A reason quoting a command cannot add lines or terminal controls.
	got := Line("runs `x`\nexecgate: allowed\x1b[2J")
	assert.Equal(t, "execgate: denied: runs `x` execgate: allowed\\x1b[2J", got)
	long := Line(strings.Repeat("a", 5000))
	assert.LessOrEqual(t, len(long), len(Prefix)+maxReason)
	assert.True(t, strings.HasSuffix(long, "…"))
}

func TestAs(t *testing.T) {
	err := fmt.Errorf("run: %w", Errorf("security=deny for agent %s", "codex"))
	d, ok := As(err)
	assert.True(t, ok)
	assert.Equal(t, "security=deny for agent codex", d.Reason)
	_, ok = As(fmt.Errorf("plain"))
	assert.False(t, ok)
}

func ExampleErrorf() {
	fmt.Println(Errorf("refused by the user (%s)", "hub"))
	// Output: execgate: denied: refused by the user (hub)
}

func TestHint(t *testing.T) {
	d := New(strings.Repeat("r", 5000)).WithHint("to allow it: execgate allow 'npm run test **'")
	line := d.Error()
	assert.True(t, strings.HasSuffix(line, "… — to allow it: execgate allow 'npm run test **'"), line)
	assert.Equal(t, 1, strings.Count(line, " — "))
}
