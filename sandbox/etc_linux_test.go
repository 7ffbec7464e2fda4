package sandbox

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestEtcGrantsLeaveSecretsOut(t *testing.T) {
	root := t.TempDir()
	files := []string{"passwd", "shadow", "gshadow-", "hosts", "ssh/ssh_config", "ssh/ssh_host_ed25519_key",
		"ssh/ssh_host_ed25519_key.pub", "ssl/certs/ca.pem", "ssl/private/server.key", "sudoers.d/agent",
		"kubernetes/pki/ca.key", "kubernetes/kubelet.conf"}
	for _, f := range files {
		p := filepath.Join(root, f)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, nil, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink("/root/.ssh/id_rsa", filepath.Join(root, "leak")); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, g := range etcGrants(root, root) {
		got = append(got, g.path)
		fi, err := os.Lstat(g.path)
		if err != nil || fi.IsDir() != g.dir {
			t.Errorf("%s: listed as a directory: %v, on disk: %v (%v)", g.path, g.dir, fi != nil && fi.IsDir(), err)
		}
	}
	want := []string{"hosts", "kubernetes/kubelet.conf", "passwd", "ssh/ssh_config", "ssh/ssh_host_ed25519_key.pub", "ssl/certs"}
	for i, w := range want {
		want[i] = filepath.Join(root, w)
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("granted\n%q\nwant\n%q", got, want)
	}
}

// Run by root, a confined command reads the system's configuration but
// not the password hashes nor the host's private keys (it did: /etc was
// granted whole, and root reads them).
func TestRootConfinedCannotReadEtcSecrets(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("only root can read /etc/shadow at all: nothing to hold back for a normal user")
	}
	if _, err := os.Stat("/etc/shadow"); err != nil {
		t.Skip("no /etc/shadow here")
	}
	w := newWorld(t)
	o := w.run(t, w.grants(), `cat /etc/passwd >/dev/null && echo passwd read
cat /etc/shadow >/dev/null 2>&1 && echo shadow read
cat /etc/gshadow >/dev/null 2>&1 && echo gshadow read
ls /etc/ssl/private >/dev/null 2>&1 && echo private listed
true`)
	if o.stdout != "passwd read\n" {
		t.Fatalf("confined root read %q (stderr %q); want only /etc/passwd", o.stdout, o.stderr)
	}
}

// BenchmarkPrepare is what building a workspace command's confinement
// costs (as root: /etc granted entry by entry).
func BenchmarkPrepare(b *testing.B) {
	if st := Probe(nil); !st.Supported() {
		b.Skipf("cannot confine here: %s", st.Reason)
	}
	g := Grants{Workspace: b.TempDir(), WriteWorkspace: true, RunCode: true, TempDir: b.TempDir()}
	for b.Loop() {
		p, err := Prepare(g)
		if err != nil {
			b.Fatal(err)
		}
		p.Close()
	}
}
