//go:build !darwin

package config

// defaultManagedPath is the managed policy file outside macOS.
const defaultManagedPath = "/etc/execgate/managed.json"
