package config

import "path/filepath"

// defaultConfigHome is $XDG_CONFIG_HOME's default on Linux: ~/.config, as
// the XDG base directory specification and adrg/xdg have it. It is worked
// out here rather than taken from adrg/xdg because that package reads the
// environment and the user-dirs file when it is initialised, and the shim,
// which reads the configuration on every command, would pay for that each
// time (TestConfigHomeMatchesXDG keeps the two in step).
func defaultConfigHome(getenv func(string) string) string {
	home := getenv("HOME")
	if home == "" {
		home = "/"
	}
	return filepath.Join(home, ".config")
}
