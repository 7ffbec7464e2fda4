package gitconfig

// HookDirs returns every directory git may run hooks from in c's
// repository: the common directory's hooks, each submodule's, and what
// core.hooksPath names, relative paths taken from each place git may take
// them from. Extra candidates only widen what a caller watches.
func (c *Config) HookDirs() ([]string, error) { return c.hookDirs() }
