package gitconfig

import "strings"

// Signs reports whether inv, run under c, signs what it makes with the
// user's key (gpg, ssh or x509 signing, git-config(1) commit.gpgSign and
// tag.gpgSign, the -S and -s options): it then needs the key and the
// agent that holds it, which no sandbox grants, and fails confined ("gpg
// failed to sign the data"). It errs towards yes: a command that would
// not sign after all only asks.
func (c *Config) Signs(inv Invocation) bool {
	if inv.ReadOnly {
		return false
	}
	switch inv.Sub {
	case "commit", "merge", "rebase", "cherry-pick", "revert", "am", "commit-tree":
		return c.signsCommit(inv.Args)
	case "tag":
		return c.signsTag(inv.Args)
	}
	return false
}

func (c *Config) signsCommit(args []string) bool {
	sign := c.lastBool("commit.gpgsign")
	for _, a := range args {
		switch {
		case a == "--":
			return sign
		case a == "--no-gpg-sign":
			sign = false
		case a == "--gpg-sign" || strings.HasPrefix(a, "--gpg-sign="):
			sign = true
		case len(a) > 1 && a[0] == '-' && a[1] != '-' && bundleSigns(a[1:]):
			sign = true
		}
	}
	return sign
}

// bundleSigns reports whether a bundle of short options (after its -)
// holds -S: -S, -Skeyid, -aS; what follows a letter that takes a value
// (-mSubject, -Ffile, -c/-C commit, -t template) is that value.
func bundleSigns(b string) bool {
	for _, r := range b {
		switch r {
		case 'S':
			return true
		case 'm', 'F', 'c', 'C', 't':
			return false
		}
	}
	return false
}

func (c *Config) signsTag(args []string) bool {
	sign := c.lastBool("tag.gpgsign")
	creates := false
	for _, a := range args {
		switch {
		case a == "-l" || a == "--list" || a == "-d" || a == "--delete" || a == "-v" || a == "--verify" ||
			strings.HasPrefix(a, "--contains") || strings.HasPrefix(a, "--points-at") || strings.HasPrefix(a, "--merged") ||
			strings.HasPrefix(a, "--no-merged") || strings.HasPrefix(a, "--sort") || strings.HasPrefix(a, "--format"):
			return false
		case a == "--no-sign":
			sign = false
		case a == "-s" || a == "--sign" || a == "-u" || strings.HasPrefix(a, "--local-user"):
			sign = true
		case !strings.HasPrefix(a, "-"):
			creates = true
		}
	}
	return sign && creates
}

// lastBool is the last value of a boolean key in c, false when unset or
// not a boolean.
func (c *Config) lastBool(name string) bool {
	v := false
	for _, e := range c.Entries {
		if e.Name == name {
			v = e.NoValue || boolTrue(e.Value)
		}
	}
	return v
}
