package policy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The programs of the host's services (docker, kubectl, helm, man,
// systemctl, journalctl) run unconfined when proven safe: the sandbox
// would only make them fail. What their options make them read, write or
// reach is therefore all that stands between the workspace and the
// user's rights. Each case is shown on the real program first (skipped
// where it is not installed), then judged.

// man -M DIR / --manpath=DIR looks pages up in DIR: a page in the
// workspace whose .so names the key prints the key.
func TestManPathIsALocalPage(t *testing.T) {
	w := newWorld(t)
	page := filepath.Join(w.ws, "m", "man1", "evilcmd.1")
	w.write(page, ".TH EVILCMD 1\n.SH NAME\nevilcmd\n.so "+filepath.Join(w.home, ".ssh", "id_rsa")+"\n")
	if _, err := exec.LookPath("man"); err == nil {
		require.Contains(t, w.bash("man --manpath=./m evilcmd"), "CANARY-KEY", "man reads the page's .so")
	}
	for _, c := range []string{
		"man --manpath=./m evilcmd", "man --manpath ./m evilcmd", "man -M./m evilcmd", "man -M m evilcmd",
		"man -aM m evilcmd", "man -M /usr/share/man:m evilcmd", "man -M \"$D\" evilcmd",
	} {
		w.requireNotSafe(c, "manual path of its own")
	}
	for _, c := range []string{"man ls", "man -M /usr/share/man ls", "man --manpath=/usr/share/man ls", "man -k ls"} {
		w.requireSafe(c)
	}
}

// Without -M, man looks beside PATH's entries too: an activated
// virtual environment's .venv/share/man comes before the system's pages,
// and a page planted there is what `man ls` formats.
func TestManPathFromPATHInTheWorkspace(t *testing.T) {
	w := newWorld(t)
	venv := filepath.Join(w.ws, ".venv")
	w.mkdir(filepath.Join(venv, "bin"))
	w.write(filepath.Join(venv, "share", "man", "man1", "ls.1"), ".TH LS 1\n.SH NAME\nls\n.so "+filepath.Join(w.home, ".ssh", "id_rsa")+"\n")
	path := filepath.Join(venv, "bin") + ":/usr/local/bin:/usr/bin:/bin"
	if man, err := exec.LookPath("man"); err == nil {
		c := exec.Command(man, "ls")
		c.Dir = w.ws
		c.Env = []string{"HOME=" + w.home, "PATH=" + path, "LC_ALL=C"}
		out, _ := c.Output()
		require.Contains(t, string(out), "CANARY-KEY", "man ls formats the virtual environment's page")
	}
	w.requireSafe("man ls")
	w.env["PATH"] = path
	w.requireNotSafe("man ls", "in the workspace")
	w.env["PATH"] = "/usr/bin:/bin"
	w.env["MANPATH"] = filepath.Join(venv, "share", "man")
	w.requireNotSafe("man ls", "in the workspace")
}

// helm loads a local chart following the links in it, and template and
// show print what the chart's files hold: a chart file linked to the key
// is the key.
func TestHelmFollowsChartLinks(t *testing.T) {
	w := newWorld(t)
	chart := filepath.Join(w.ws, "chart")
	w.write(filepath.Join(chart, "Chart.yaml"), "apiVersion: v2\nname: c\nversion: 0.1.0\n")
	w.write(filepath.Join(chart, "templates", "cm.yaml"), "k: {{ .Files.Get \"notes.txt\" }}\n")
	plain := filepath.Join(w.ws, "plain")
	w.write(filepath.Join(plain, "Chart.yaml"), "apiVersion: v2\nname: p\nversion: 0.1.0\n")
	w.requireSafe("helm template ./chart")
	w.requireSafe("helm show values ./plain")
	w.link("../../../.ssh/id_rsa", "chart/notes.txt")
	w.link("../../../.ssh", "plain/files")
	if helm, err := exec.LookPath("helm"); err == nil {
		out, _ := exec.Command(helm, "template", chart).Output()
		require.Contains(t, string(out), "CANARY-KEY", "helm reads through the link")
	}
	w.requireNotSafe("helm template ./chart", "credentials")
	w.requireNotSafe("helm show values ./plain", "credentials")
	w.requireNotSafe("helm show all ./plain", "credentials")
}

// kubectl --profile-output writes (truncates) its file before it reaches
// any cluster: another project's file is a write outside the workspace.
func TestKubectlProfileOutputElsewhere(t *testing.T) {
	w := newWorld(t)
	// Another project: a repository of its own (a file in /tmp outside
	// any repository is scratch).
	victim := filepath.Join(w.root, "other", "Makefile")
	w.write(victim, "all:\n")
	w.mkdir(filepath.Join(w.root, "other", ".git"))
	if kubectl, err := exec.LookPath("kubectl"); err == nil {
		c := exec.Command(kubectl, "get", "pods", "--request-timeout=1s", "--profile=cpu", "--profile-output="+victim)
		c.Env = []string{"HOME=" + w.home, "KUBECONFIG=" + filepath.Join(w.root, "none")}
		_ = c.Run()
		b, err := os.ReadFile(victim)
		require.NoError(t, err)
		require.NotEqual(t, "all:\n", string(b), "kubectl rewrote the file outside")
	}
	for _, c := range []string{
		"kubectl get pods --profile=cpu --profile-output=" + victim,
		"kubectl get pods --profile cpu --profile-output " + victim,
		"kubectl version --profile=heap --profile-output=" + victim,
	} {
		w.requireNotSafe(c, "outside the workspace")
	}
	// The discovery cache maps names to resources: one in the workspace
	// can make `get po -o yaml` fetch secrets (not run here: no cluster).
	for _, c := range []string{"kubectl get pods --cache-dir " + filepath.Dir(victim), "kubectl get po -o yaml --cache-dir ./c", "kubectl get po --cache-dir=c"} {
		w.requireNotSafe(c, "discovery")
	}
	// kubectl's model is allow-only: --profile is not among its options,
	// in the workspace or not.
	w.requireNotSafe("kubectl get pods --profile=cpu --profile-output=cpu.pprof", "not read-only")
	w.requireSafe("kubectl get pods")
}

// docker --config DIR takes the client's configuration from DIR: its
// current context names the daemon, any host (docker -H is asked about),
// and its plugin hooks run programs. Shown with a context whose daemon
// is a local listener: docker ps connects to it.
func TestDockerClientConfig(t *testing.T) {
	w := newWorld(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	cfg := filepath.Join(w.ws, "dcfg")
	// A context's directory is the SHA-256 of its name ("evil").
	sum := sha256.Sum256([]byte("evil"))
	meta := filepath.Join(cfg, "contexts", "meta", hex.EncodeToString(sum[:]))
	w.write(filepath.Join(cfg, "config.json"), `{"currentContext":"evil"}`)
	w.write(filepath.Join(meta, "meta.json"), `{"Name":"evil","Metadata":{},"Endpoints":{"docker":{"Host":"tcp://`+ln.Addr().String()+`"}}}`)
	if docker, err := exec.LookPath("docker"); err == nil {
		reached := make(chan bool, 1)
		go func() {
			c, err := ln.Accept()
			if err == nil {
				c.Close()
			}
			reached <- err == nil
		}()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c := exec.CommandContext(ctx, docker, "--config", cfg, "ps")
		c.Env = []string{"HOME=" + w.home, "PATH=" + os.Getenv("PATH")}
		require.NoError(t, c.Start())
		select {
		case ok := <-reached:
			require.True(t, ok, "docker ps connected to the context's host")
		case <-ctx.Done():
			t.Fatal("docker ps did not connect to the context's host")
		}
		cancel()
		_ = c.Wait()
	}
	w.requireNotSafe("docker --config ./dcfg ps", "docker client configuration")
	w.requireNotSafe("docker --config=./dcfg context ls", "docker client configuration")
	w.requireSafe("docker ps")
	w.requireSafe("docker --context dev ps")
}

// A shell fed a here-document that runs no command still starts: what
// was judged names it (the differential against bash found `zsh` run and
// nothing judged, for zsh <<'EOF' with an empty line).
func TestShellFedAnEmptyHeredocIsJudged(t *testing.T) {
	w := newWorld(t)
	for _, c := range []string{"zsh <<'EOF'\n\nEOF", "bash <<'EOF'\n# nothing\nEOF"} {
		res := w.analyze(c)
		require.NotEmpty(t, res.Segments, "%q", c)
		require.Equal(t, strings.Fields(c)[0], res.Segments[0].Argv[0], "%q", c)
	}
	res := w.analyze("zsh <<'EOF'\nls\nEOF")
	require.Equal(t, "ls", res.Segments[0].Argv[0], "a body with commands is judged as them")
}
