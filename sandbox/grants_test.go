package sandbox

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// Environ takes out what the grants withhold, every occurrence, and keeps
// the rest in order; the summary says what was withheld.
func TestEnvironWithholds(t *testing.T) {
	g := Grants{Withheld: []string{"NPM_TOKEN", "npm_config_//r/:_authToken"}}
	env := []string{"A=1", "NPM_TOKEN=x", "npm_config_//r/:_authToken=y", "B=2", "NPM_TOKEN=z", "NPM_TOKENX=keep"}
	assert.Equal(t, []string{"A=1", "B=2", "NPM_TOKENX=keep"}, g.Environ(env))
	assert.Len(t, env, 6, "the caller's slice is left as it was")
	assert.Contains(t, g.Summary(), "without NPM_TOKEN, npm_config_//r/:_authToken in its environment")
}
