//go:build !linux

package config

import "github.com/adrg/xdg"

// defaultConfigHome is $XDG_CONFIG_HOME's default where it is not
// ~/.config (macOS: ~/Library/Application Support), from adrg/xdg.
func defaultConfigHome(func(string) string) string {
	return xdg.ConfigHome
}
