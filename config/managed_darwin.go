package config

// defaultManagedPath is where macOS keeps system-wide settings that only
// an administrator can write.
const defaultManagedPath = "/Library/Application Support/execgate/managed.json"
