package policy

import (
	"path/filepath"
	"strings"
)

// HoldsCredentials reports whether dir, as written or as it resolves on
// disk, lies in a place that holds credentials (~/.ssh, ~/.kube,
// ~/.password-store) or holds a known credential file beneath it
// (~/.config holds ~/.config/gh/hosts.yml). Such a directory is no
// workspace to grant whole to a confined command: started in ~/.kube,
// `echo '…' | python3` read the cluster's credentials there, unasked.
// Patterns that name a file anywhere (**/.env) are a project's own and
// are not looked for.
func (e *Engine) HoldsCredentials(req Request, dir string) bool {
	a := &analyzer{r: e.rules, home: req.Home, getenv: req.env}
	forms := []string{filepath.Clean(dir)}
	if real, err := filepath.EvalSymlinks(dir); err == nil && real != forms[0] {
		forms = append(forms, real)
	}
	for _, abs := range forms {
		f := a.homeForm(abs)
		if a.pathIn("credentials", f) || a.pathIn("credentials", f+"/x") {
			return true
		}
		for _, set := range []string{"credentials", "credential-samples"} {
			ps := a.r.pathSets.get(set)
			if ps == nil {
				return true // no set to judge by: fail closed
			}
			for _, p := range ps.patterns {
				if strings.ContainsAny(p, "*?[{") {
					continue
				}
				for _, w := range []string{f, abs} {
					if strings.HasPrefix(p, w+"/") {
						return true
					}
				}
			}
		}
	}
	return false
}
