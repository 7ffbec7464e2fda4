package policy

import (
	"fmt"
	"net/url"
	"strings"
)

// gh's read-only subcommands run unconfined with the user's token: a
// repository written [HOST/]OWNER/REPO (-R, gh repo view) or a pull
// request or issue given by its URL makes gh send its query, whose words
// the command chooses, to that host. A query to a host other than
// GitHub's is a way out for data, so it asks.
// https://cli.github.com/manual/gh_help_environment (GH_HOST, [HOST/]OWNER/REPO)

// githubHosts are the hosts of github.com's own service.
var githubHosts = nameSet{"github.com", "www.github.com"}

// ghHostUnsafe says why a gh query may reach a host other than GitHub's:
// the -R/--repo value, and the operands when repoOperands is set (gh
// repo view OWNER/REPO) or when they are URLs (gh pr view URL).
func ghHostUnsafe(v argView, repoOperands bool) string {
	for _, i := range v.options {
		spec := matchingSpec([]string{"-R", "--repo"}, v.words[i].text)
		if spec == "" {
			continue
		}
		val, ok := optionSpecValue(v.words, i, spec)
		if !ok || !val.known {
			return fmt.Sprintf("%s names a repository known only at run time, which may be on any host", spec)
		}
		if host := ghRepoHost(val.text); host != "" {
			return fmt.Sprintf("%s %s sends the query to %s, not GitHub (name the repository OWNER/REPO)", spec, val.text, host)
		}
	}
	for _, i := range v.positional {
		w := v.words[i]
		if !w.known {
			return fmt.Sprintf("%s is known only at run time, and may be a URL on any host", w.shown())
		}
		if !repoOperands && !strings.Contains(w.text, "://") {
			continue
		}
		if host := ghRepoHost(w.text); host != "" {
			return fmt.Sprintf("%s sends the query to %s, not GitHub", w.text, host)
		}
	}
	return ""
}

// ghRepoHost returns the host other than GitHub's that a repository
// name or URL names, "" for OWNER/REPO, REPO or a github.com name.
func ghRepoHost(name string) string {
	if strings.Contains(name, "://") {
		u, err := url.Parse(name)
		if err != nil || u.Hostname() == "" {
			return "a host that cannot be read from it"
		}
		if githubHosts.has(strings.ToLower(u.Hostname())) {
			return ""
		}
		return u.Hostname()
	}
	if strings.ContainsAny(name, "@:") {
		return "the host of an SSH address" // git@HOST:OWNER/REPO
	}
	parts := strings.Split(name, "/")
	switch {
	case len(parts) <= 2:
		return ""
	case len(parts) == 3 && githubHosts.has(strings.ToLower(parts[0])):
		return ""
	case parts[0] == "":
		return "a host that cannot be read from it" // //o/r, /o/r
	default:
		return parts[0]
	}
}
