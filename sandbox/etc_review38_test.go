package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// More of /etc holds secrets root's confined command was granted: PPP's
// passwords, APT's repository credentials, MySQL's maintenance password
// on Debian, Wi-Fi keys, Ceph keyrings, a GitLab runner's tokens, LDAP
// bind passwords, Postfix's relay password, SSH's v1 host key.
func TestEtcGrantsLeaveMoreSecretsOut(t *testing.T) {
	root := t.TempDir()
	secrets := []string{"ppp/chap-secrets", "ppp/pap-secrets", "apt/auth.conf", "apt/auth.conf.d/corp.conf",
		"mysql/debian.cnf", "wpa_supplicant/wpa_supplicant.conf", "ceph/ceph.client.admin.keyring",
		"gitlab-runner/config.toml", "ldap.secret", "pam_ldap.secret", "libnss-ldap.secret",
		"postfix/sasl_passwd", "postfix/sasl_passwd.db", "ssh/ssh_host_key", "gitlab/gitlab-secrets.json"}
	kept := []string{"ppp/options", "apt/sources.list", "mysql/my.cnf", "ceph/ceph.conf", "postfix/main.cf", "ssh/ssh_config"}
	for _, f := range append(append([]string{}, secrets...), kept...) {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	granted := map[string]bool{}
	for _, g := range etcGrants(root, root) {
		rel, _ := filepath.Rel(root, g.path)
		granted[rel] = true
	}
	covers := func(f string) bool {
		for d := f; d != "."; d = filepath.Dir(d) {
			if granted[d] {
				return true
			}
		}
		return false
	}
	for _, f := range secrets {
		if covers(f) {
			t.Errorf("%s is granted", f)
		}
	}
	for _, f := range kept {
		if !covers(f) {
			t.Errorf("%s is not granted", f)
		}
	}
}

// Run by root, a confined command cannot list APT's credentials (it could:
// only the entries of etcSecrets were left out).
func TestRootConfinedCannotReadAptCredentials(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("root only")
	}
	for _, d := range []string{"/etc/apt/auth.conf.d", "/etc/apt/apt.conf.d"} {
		if _, err := os.Stat(d); err != nil {
			t.Skipf("no %s here", d)
		}
	}
	w := newWorld(t)
	o := w.run(t, w.grants(), `ls /etc/apt/auth.conf.d >/dev/null 2>&1 && echo listed
ls /etc/apt/apt.conf.d >/dev/null && echo apt read
true`)
	if o.stdout != "apt read\n" {
		t.Fatalf("confined root: %q (stderr %q); want only the rest of /etc/apt read", o.stdout, o.stderr)
	}
}
