package policy

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// The programs of the host's services run unconfined when judged safe, so
// their models are allow-only: an option a model does not list is not
// proven safe, wherever it stands on the line.

// TestHostServicesUnlistedOptionsAsk: options the read-only models of
// docker, kubectl, systemctl, journalctl, helm and man never listed, each of which
// their old models (deny-lists) let run unconfined. Each is tried before
// the subcommand and after it.
func TestHostServicesUnlistedOptionsAsk(t *testing.T) {
	e := testEngine(t)
	cases := map[string][]string{ // "PROGRAM SUBCOMMAND" → options
		"docker ps": {"--tls", "--tlsverify", "--tlscacert=./ca.pem", "--tlscert=./c.pem", "--tlskey=./k.pem",
			"--host=unix:///tmp/d.sock", "--config=./d", "--no-such-option", "-Z", "--formatx"},
		"docker logs app": {"--config=./d", "--host=unix:///tmp/d.sock", "--no-such-option", "-x"},
		"docker image ls": {"--tlsverify", "--no-such-option"},
		"docker inspect --format '{{.State.Status}}' app": {"--tls", "--no-such-option"},
		"kubectl get pods": {"--kubeconfig=./k", "--server=https://203.0.113.9", "--token=x", "--as=admin",
			"--as-group=system:masters", "--user=admin", "--cluster=other", "--cache-dir=./c", "--profile=cpu",
			"--profile-output=./p", "--log-file=./l", "--certificate-authority=./ca", "--client-key=./k",
			"--insecure-skip-tls-verify", "--tls-server-name=x", "--username=u", "--password=p", "-v=9", "--vmodule=x=9",
			"--no-such-option"},
		"kubectl logs web": {"--kubeconfig=./k", "--insecure-skip-tls-verify-backend", "--profile-output=./p", "--no-such-option"},
		"kubectl top pod":  {"--kubeconfig=./k", "--no-such-option"},
		"systemctl status nginx": {"--host=u@h", "--machine=c", "--root=./r", "--image=./x.raw", "--job-mode=fail",
			"--kill-whom=all", "--signal=KILL", "--force", "--now", "--runtime", "--global", "--preset-mode=full",
			"--firmware-setup", "--boot-loader-entry=x", "--mkdir", "--read-only", "--no-such-option"},
		"helm list": {"--kubeconfig=./k", "--kube-token=x", "--kube-apiserver=https://203.0.113.9", "--kube-as-user=admin",
			"--kube-ca-file=./ca", "--registry-config=./r", "--repository-config=./r", "--repository-cache=./c", "--no-such-option"},
		"helm template ./chart": {"--post-renderer=./x.sh", "--set-file=k=./f", "--values=./v.yaml", "--output-dir=./o",
			"--validate", "--no-such-option"},
		"man ls": {"-X", "-Xdpi100", "--gxditview", "-t", "--troff", "-Tpdf", "-Z", "--ditroff", "-p", "--preprocessor=e",
			"-c", "--catman", "-u", "--update", "-m", "--systems=x", "-P", "--pager=x", "-H", "-C", "--no-such-option"},
		"systemctl list-units": {"--image=./x.raw", "--root=./r", "--no-such-option"},
		"journalctl -u nginx": {"--directory=./j", "--file=./x.journal", "--root=./r", "--image=./x.raw",
			"--machine=c", "--host=h", "--cursor-file=./c", "--verify-key=k", "--interval=1h", "--force",
			"--vacuum-time=1s", "--rotate", "--flush", "--sync", "--no-such-option"},
	}
	for line, opts := range cases {
		program, rest, _ := strings.Cut(line, " ")
		for _, opt := range opts {
			for _, cmd := range []string{program + " " + opt + " " + rest, line + " " + opt} {
				res := analyzeForTest(e, cmd)
				assert.NotEqual(t, Safe, res.Risk, "%q must ask: %s", cmd, explain(res))
			}
		}
		res := analyzeForTest(e, line)
		assert.Equal(t, Safe, res.Risk, "%q: %s", line, explain(res))
	}
}

// hostOnlyLeaf is one leaf of a host service's model, with the options
// it allows (its own and those of every model above it).
type hostOnlyLeaf struct {
	program, cmd string
	spec         *safeSpec
	only         []string
}

// hostOnlyLeaves lists the leaves below spec with their allowed options.
func hostOnlyLeaves(program, prefix string, spec *safeSpec, inherited []string) []hostOnlyLeaf {
	only := append(slices.Clone(inherited), spec.Only...)
	if spec.Sub == nil {
		return []hostOnlyLeaf{{program, prefix, spec, only}}
	}
	var out []hostOnlyLeaf
	for sub, subSpec := range spec.Sub.all() {
		out = append(out, hostOnlyLeaves(program, strings.TrimSpace(prefix+" "+sub), subSpec, only)...)
	}
	return out
}

// randomOption returns a made-up option: a long one of lower-case words,
// or a single letter.
func randomOption(r *rand.Rand) string {
	if r.IntN(3) == 0 {
		letters := "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
		return "-" + string(letters[r.IntN(len(letters))])
	}
	var b strings.Builder
	b.WriteString("--")
	for i := range 2 + r.IntN(12) {
		if i > 0 && r.IntN(5) == 0 {
			b.WriteByte('-')
		}
		b.WriteByte(byte('a' + r.IntN(26)))
	}
	if r.IntN(3) == 0 {
		b.WriteString("=./x")
	}
	return b.String()
}

// stillOpenHostServices are the host services whose read-only models are
// not allow-only yet: an option they do not deny is still taken as safe.
var stillOpenHostServices []string

// TestHostServicesAreAllowOnly is the property: for every host service
// whose model is allow-only, a random option its model does not list is
// never safe, before the subcommand or after it; and the services whose
// models are not allow-only are exactly the ones named as still open.
func TestHostServicesAreAllowOnly(t *testing.T) {
	e := testEngine(t)
	r := rand.New(rand.NewPCG(40, 41))
	var open []string
	for name := range hostServices.all() {
		spec := e.rules.Safe.get(name)
		if spec == nil {
			continue
		}
		leaves := hostOnlyLeaves(name, name, spec, nil)
		allowOnly := true
		for _, l := range leaves {
			allowOnly = allowOnly && len(l.only) > 0
		}
		if !allowOnly {
			open = append(open, name)
			continue
		}
		requireUnlistedOptionsAsk(t, e, r, name, leaves)
	}
	slices.Sort(open)
	assert.Equal(t, stillOpenHostServices, open, "host services whose models are not allow-only")
}

// requireUnlistedOptionsAsk checks each leaf of program's model: the leaf
// alone is safe, and a random option it does not list is not, before
// the subcommand or after it.
func requireUnlistedOptionsAsk(t *testing.T, e *Engine, r *rand.Rand, name string, leaves []hostOnlyLeaf) {
	t.Helper()
	for _, l := range leaves {
		if l.spec.Secret != "" {
			continue
		}
		base := l.cmd
		switch l.spec.Check {
		case "docker-inspect":
			base += " --format '{{.State.Status}}' app"
		case "systemctl-show":
			base += " -p ActiveState nginx"
		}
		res := analyzeForTest(e, base)
		require.Equal(t, Safe, res.Risk, "%q: %s", base, explain(res))
		rest := strings.TrimPrefix(base, name)
		for range 60 {
			opt := randomOption(r)
			if onlyAllows(l.only, opt) {
				continue
			}
			for _, cmd := range []string{base + " " + opt, name + " " + opt + rest} {
				res := analyzeForTest(e, cmd)
				require.NotEqual(t, Safe, res.Risk, "%q: an option the model does not list is safe", cmd)
			}
		}
	}
}
