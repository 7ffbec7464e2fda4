package sandbox

import (
	"os"
	"path"
	"path/filepath"
	"strings"
)

// A confined command reads the system's configuration (/etc). Run by a
// normal user, the secrets kept there are not the user's to read anyway;
// run by root — an agent in a container, a CI job — Landlock is the only
// thing between the command and them: password hashes, the host's SSH
// keys, TLS private keys, VPN and Wi-Fi secrets, a cluster's CA keys. So
// for root, /etc is granted entry by entry, leaving these out (Landlock
// grants trees; it cannot take one file back out of a granted tree).

// etcSecrets are the paths under /etc left out for root, as patterns on
// the path below /etc (path.Match, one level each): the files, and the
// directories whose whole content is secret.
var etcSecrets = [...]string{
	"shadow", "shadow-", "gshadow", "gshadow-", // shadow(5), gshadow(5)
	"sudoers", "sudoers.d", // sudoers(5): who may become root, NOPASSWD rules
	"security/opasswd",                                         // pam_pwhistory's old password hashes
	"ssh/ssh_host_*_key",                                       // sshd(8): the host's private keys (.pub stay)
	"ssl/private",                                              // Debian's TLS private keys
	"pki/tls/private",                                          // Red Hat's
	"wireguard",                                                // wg-quick(8): private keys in its .conf
	"NetworkManager/system-connections",                        // Wi-Fi and VPN secrets
	"ipsec.secrets", "ipsec.d/private", "strongswan.d/private", // IPsec keys
	"openvpn/*.key", "openvpn/client", "openvpn/server", // OpenVPN keys and configs holding them
	"letsencrypt/archive", "letsencrypt/live", "letsencrypt/keys", "letsencrypt/accounts",
	"kubernetes/pki", "kubernetes/admin.conf", "kubernetes/super-admin.conf", // a cluster's CA and admin credentials
	"rancher/k3s/k3s.yaml", "rancher/node/password",
	"docker/key.json",                  // dockerd's identity key
	"libvirt/secrets",                  // libvirt's stored secrets
	"krb5.keytab",                      // Kerberos host keys
	"machine-id",                       // a stable host identifier, not needed to build
	"credstore", "credstore.encrypted", // systemd's credentials
	"ssh/ssh_host_key",                    // sshd's protocol 1 host key
	"ppp/chap-secrets", "ppp/pap-secrets", // pppd(8): dial-up and VPN passwords
	"apt/auth.conf", "apt/auth.conf.d", // apt_auth.conf(5): private repositories' credentials
	"mysql/debian.cnf",          // Debian's MySQL maintenance account password
	"wpa_supplicant", "netplan", // Wi-Fi keys (netplan's YAML holds them too)
	"ceph/*.keyring", // Ceph's client keys
	"gitlab-runner",  // a CI runner's registration and job tokens
	"gitlab/gitlab-secrets.json", "gitlab/initial_root_password",
	"ldap.secret", "pam_ldap.secret", "libnss-ldap.secret", // LDAP bind passwords
	"postfix/sasl_passwd", "postfix/sasl_passwd.db", // a relay's password
}

// secretUnder reports whether rel (a path below /etc) is one of
// etcSecrets, and whether a secret lies below it (so that its entries are
// granted one by one).
func secretUnder(rel string) (secret, holds bool) {
	dir, base := path.Split(rel)
	for _, p := range etcSecrets {
		pdir, pbase := path.Split(p)
		if pdir != dir {
			// Not this level: a secret below rel, or nothing to do
			// with it (most entries stop here, without a match).
			if below, ok := strings.CutPrefix(p, rel); ok && strings.HasPrefix(below, "/") {
				holds = true
			}
			continue
		}
		if pbase == base {
			return true, false
		}
		if strings.ContainsAny(pbase, "*?[") {
			if ok, _ := path.Match(pbase, base); ok {
				return true, false
			}
		}
	}
	return false, holds
}

// etcGrant is one path of root's /etc grants, with what its listing said
// it is: granting it then needs no stat (there are about 200 of them, on
// every confined command root runs).
type etcGrant struct {
	path string
	dir  bool
}

// etcGrants lists what root's confined command may read under dir (/etc
// or a directory below it): whole entries, leaving out etcSecrets, and
// going into a directory that holds one. An entry that cannot be listed
// is left out with what it holds: a grant is never widened to fit.
func etcGrants(root, dir string) []etcGrant {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var out []etcGrant
	for _, e := range ents {
		p := filepath.Join(dir, e.Name())
		rel, err := filepath.Rel(root, p)
		if err != nil {
			continue
		}
		secret, holds := secretUnder(filepath.ToSlash(rel))
		switch {
		case secret:
		case e.Type()&os.ModeSymlink != 0:
			// Granted, a link's target would be (the kernel's rule is
			// made on what the path opens): as with /etc granted whole,
			// it reads through only to what is granted anyway.
		case holds && e.IsDir():
			out = append(out, etcGrants(root, p)...)
		default:
			out = append(out, etcGrant{path: p, dir: e.IsDir()})
		}
	}
	return out
}
