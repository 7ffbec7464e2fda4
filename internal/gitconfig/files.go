package gitconfig

import "slices"

// Files returns the configuration files c was read from, includes and
// submodules' too, in the order git reads them: what a caller watching
// for a change of configuration must watch, beyond the repository's own
// config (an include inside the work tree, the config of the directory a
// commondir file names).
func (c *Config) Files() []string { return slices.Clone(c.files) }
