package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The host services' programs (man, docker, kubectl) run unconfined when
// the policy proves them safe. Through their options, or a page a
// confined command put where man looks, they read the key, reach any
// host, or write another project's files. Each attack runs through the
// shim as an agent would, with nobody to ask.

// A confined command writes a manual page into the workspace's virtual
// environment, whose bin is on the agent's PATH; `man ls` then formatted
// it unconfined, and its .so printed ~/.ssh/id_rsa. So did `man
// --manpath=./m PAGE` with the page in ./m.
func TestManPageOfTheWorkspaceCannotPrintTheKey(t *testing.T) {
	requireConfinement(t)
	lookOrSkip(t, "man")
	e := newShimEnv(t, "")
	key := filepath.Join(e.home(), ".ssh", "id_rsa")
	require.NoError(t, os.MkdirAll(filepath.Dir(key), 0o700))
	require.NoError(t, os.WriteFile(key, []byte("CANARY-MAN-KEY\n"), 0o600))
	venvBin := filepath.Join(e.work, ".venv", "bin")
	require.NoError(t, os.MkdirAll(venvBin, 0o755))
	var env []string
	for _, kv := range e.env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			kv = "PATH=" + venvBin + ":" + v
		}
		env = append(env, kv)
	}
	e.env = env
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	page := `.TH LS 1\n.SH NAME\nls\n.so ` + key + `\n`
	plant := "mkdir -p .venv/share/man/man1 m/man1 && printf '" + page + "' > .venv/share/man/man1/ls.1 && cp .venv/share/man/man1/ls.1 m/man1/evilcmd.1"
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", plant), "")
	require.Equal(t, 0, o.status, "the page is a workspace write, confined: %+v", o)
	for _, cmd := range []string{"man ls", "man --manpath=./m evilcmd", "man -M m evilcmd"} {
		o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", cmd), "")
		assert.NotContains(t, o.stdout+o.stderr, "CANARY-MAN-KEY", "%s", cmd)
		assert.NotEqual(t, 0, o.status, "%s must ask (and be refused with nobody to ask): %+v", cmd, o)
	}
}

// docker --config DIR takes its context from DIR: a context whose daemon
// is any host made the unconfined `docker ps` connect there.
func TestDockerConfigOfTheWorkspaceCannotReachAHost(t *testing.T) {
	lookOrSkip(t, "docker")
	e := newShimEnv(t, "")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	sum := sha256.Sum256([]byte("evil"))
	meta := filepath.Join(e.work, "dcfg", "contexts", "meta", hex.EncodeToString(sum[:]))
	require.NoError(t, os.MkdirAll(meta, 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(e.work, "dcfg", "config.json"), []byte(`{"currentContext":"evil"}`), 0o644))
	require.NoError(t, os.WriteFile(filepath.Join(meta, "meta.json"),
		[]byte(`{"Name":"evil","Metadata":{},"Endpoints":{"docker":{"Host":"tcp://`+ln.Addr().String()+`"}}}`), 0o644))
	reached := make(chan struct{}, 1)
	go func() {
		if c, err := ln.Accept(); err == nil {
			c.Close()
			reached <- struct{}{}
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cmd := e.command(ctx, e.shim("bash"), "bash", "-c", "docker --config dcfg ps")
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-reached:
		t.Fatal("docker --config dcfg ps connected to the host the workspace's context names")
	case <-done:
	case <-ctx.Done():
		t.Fatal("docker did not end")
	}
	select {
	case <-reached:
		t.Fatal("docker --config dcfg ps connected to the host the workspace's context names")
	default:
	}
}

// kubectl --profile-output truncated another project's file before it
// looked for a cluster.
func TestKubectlCannotTruncateAnotherProject(t *testing.T) {
	lookOrSkip(t, "kubectl")
	e := newShimEnv(t, "")
	other := t.TempDir()
	require.NoError(t, os.Mkdir(filepath.Join(other, ".git"), 0o755))
	victim := filepath.Join(other, "Makefile")
	require.NoError(t, os.WriteFile(victim, []byte("all:\n"), 0o644))
	e.env = append(e.env, "KUBECONFIG="+filepath.Join(other, "none"))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "kubectl get pods --request-timeout=1s --profile=cpu --profile-output="+victim), "")
	b, err := os.ReadFile(victim)
	require.NoError(t, err)
	assert.Equal(t, "all:\n", string(b), "%+v", o)
}

// kubectl config view redacts a user's token and password, not an
// auth-provider's secrets or an exec plugin's arguments and environment:
// run unconfined and unasked, it printed an OIDC refresh token.
func TestKubectlConfigViewCannotPrintTheKubeconfigsSecrets(t *testing.T) {
	lookOrSkip(t, "kubectl")
	e := newShimEnv(t, "")
	kc := filepath.Join(e.home(), ".kube", "config")
	require.NoError(t, os.MkdirAll(filepath.Dir(kc), 0o700))
	require.NoError(t, os.WriteFile(kc, []byte(`apiVersion: v1
kind: Config
clusters:
- {name: c, cluster: {server: "https://127.0.0.1:6443"}}
users:
- name: u
  user:
    token: CANARY-TOKEN
    auth-provider: {name: oidc, config: {client-secret: CANARY-OIDC-SECRET, refresh-token: CANARY-REFRESH}}
contexts:
- {name: x, context: {cluster: c, user: u}}
current-context: x
`), 0o600))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for _, cmd := range []string{"kubectl config view", "kubectl config view --minify -o json"} {
		o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", cmd), "")
		assert.NotContains(t, o.stdout+o.stderr, "CANARY-", "%s", cmd)
	}
	o := runOutcome(t, e.command(ctx, e.shim("bash"), "bash", "-c", "kubectl config get-contexts"), "")
	assert.Equal(t, 0, o.status, "names only: %+v", o)
}
