package gitconfig

// UserFiles lists the user's own configuration files that exist — the
// global ones (GIT_CONFIG_GLOBAL, or $XDG_CONFIG_HOME/git/config and
// ~/.gitconfig) and every file they include, includeIf's whatever their
// condition — as git would read them. A sandbox that lets git read
// ~/.gitconfig but not what it includes makes every git command fail
// ("fatal: bad config line"). The repository's own configuration is left
// out: its includes are the repository's to choose, and may name any
// file. An error means a file could not be read or parsed, or an include
// not followed; the files read until then are returned with it.
func UserFiles(getenv func(string) string, home string) ([]string, error) {
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	c := &Config{env: getenv, home: cmpOr(getenv("HOME"), home), dir: "/"}
	for _, f := range c.globalFiles() {
		if err := c.readFile(f, 0); err != nil {
			return c.files, err
		}
	}
	return c.files, nil
}
