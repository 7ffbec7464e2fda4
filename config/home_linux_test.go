package config

import (
	"os"
	"testing"

	"github.com/adrg/xdg"
	"github.com/stretchr/testify/assert"
)

// TestConfigHomeMatchesXDG: the default worked out by hand on Linux is the
// one adrg/xdg gives for the same environment.
func TestConfigHomeMatchesXDG(t *testing.T) {
	for _, home := range []string{os.Getenv("HOME"), "/home/ada", ""} {
		t.Setenv("HOME", home)
		t.Setenv("XDG_CONFIG_HOME", "")
		xdg.Reload()
		assert.Equal(t, xdg.ConfigHome, defaultConfigHome(os.Getenv), "HOME=%q", home)
	}
	xdg.Reload()
}
