//go:build !linux

package shim

// unixSocketsRefused reports false: no sandbox here refuses sockets.
func unixSocketsRefused() bool { return false }
