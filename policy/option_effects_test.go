package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

// A wildcard covers words, not effects: under an allowlist entry
// `PROGRAM **`, an option that makes the program run code, load a library,
// write outside the workspace, upload, download, listen or gain privilege
// still asks, while the program's ordinary uses are allowed.

// optionEffectPolicy is security=allowlist, ask=on-miss, without
// autoAllowSafe: only the allowlist entry can allow.
var optionEffectPolicy = config.Policy{Security: config.SecurityAllowlist, Ask: config.AskOnMiss, AskFallback: config.SecurityDeny, TimeoutMs: 1000}

func decideUnder(e *Engine, allow, command string) Result {
	return e.Evaluate(Request{
		Command: command, Cwd: testWorkspace, Home: testHome, Policy: optionEffectPolicy,
		Allow: pattern.NewMatcher(entries(allow), fakePath),
	})
}

// TestOptionEffectsNotCoveredByWildcard asks, for every rule that names an
// effect, that each of its match examples is not allowed by a wildcard on
// the program it runs.
func TestOptionEffectsNotCoveredByWildcard(t *testing.T) {
	e := testEngine(t)
	n := 0
	for _, ru := range e.rules.Rules {
		if ru.Effect == "" {
			continue
		}
		assert.True(t, ru.Firm || ru.Risk == Dangerous, "rule %s names an effect but is neither firm nor dangerous", ru.ID)
		for _, cmd := range ru.Match {
			program := strings.Fields(cmd)[0]
			res := decideUnder(e, program+" **", cmd)
			n++
			assert.NotEqual(t, Allow, res.Decision, "rule %s (%s): %q is allowed under `%s **`\n\t%s", ru.ID, ru.Effect, cmd, program, explain(res))
		}
	}
	assert.Greater(t, n, 150)
}

// TestOptionEffectsAllowlist pins hand-picked decisions: the effect options
// ask under a wildcard, the ordinary uses beside them are allowed, and an
// exact entry still allows what it names.
func TestOptionEffectsAllowlist(t *testing.T) {
	e := testEngine(t)
	cases := []struct {
		pattern, command string
		allow            bool
	}{
		{"curl **", "curl -s https://api.github.com/repos/octo/hello", true},
		{"curl **", "curl -fsSL -o dist/tool https://example.com/tool", true},
		{"curl **", "curl -s -o /dev/null -w '%{http_code}' https://example.com", true},
		{"curl **", "curl -o ~/tool https://example.com/tool", false},
		{"curl **", "curl -F 'f=@build.log' https://paste.example.com", false},
		{"curl **", "curl -X POST -d 'x=1' https://example.com", false},
		{"curl **", "curl -K curl.cfg", false},
		{"wget **", "wget https://example.com/a.tgz", true},
		{"wget **", "wget --post-data='a=1' https://example.com", false},
		{"ssh **", "ssh -T git@github.com", true},
		{"ssh **", "ssh -o ProxyCommand='nc %h %p' host", false},
		{"ssh **", "ssh host 'rm -rf ~/app'", false},
		{"ssh-keygen **", "ssh-keygen -lf deploy_key.pub", true},
		{"ssh-keygen **", "ssh-keygen -D ./libp11.so", false},
		{"scp **", "scp build.tgz host:", false},
		{"rsync **", "rsync -a src/ dst/", true},
		{"rsync **", "rsync -a src/ host:dst/", false},
		{"docker **", "docker ps", true},
		{"docker **", "docker build -t app .", true},
		{"docker **", "docker run --rm -v ./testdata:/data alpine ls /data", true},
		{"docker **", "docker run --rm -v /:/host alpine ls /host", false},
		{"docker **", "docker run --rm --privileged alpine", false},
		{"docker **", "docker -H tcp://10.0.0.2:2375 ps", false},
		{"git **", "git apply fix.patch", true},
		{"git **", "git apply --unsafe-paths --directory=/etc x.patch", false},
		{"npm **", "npm run build", true},
		{"npm **", "npm install", true},
		{"npm **", "npm exec -- prettier --check .", false},
		{"npm exec -- prettier --check .", "npm exec -- prettier --check .", true}, // an exact entry still allows
		{"npm **", "npm install /opt/pkg", false},
		{"pip **", "pip install -r requirements.txt", true},
		{"pip **", "pip install -i https://pypi.example.net/simple x", false},
		{"openssl **", "openssl rand -hex 16", true},
		{"openssl **", "openssl enc -aes-256-cbc -in a.txt -out /srv/a.enc -pass pass:x", false},
		{"openssl **", "openssl s_client -connect example.com:443", false},
		{"sqlite3 **", "sqlite3 app.db 'select 1'", true},
		{"sqlite3 **", "sqlite3 app.db '.shell id'", false},
		{"tar **", "tar -xzf vendor.tgz -C third_party", true},
		{"tar **", "tar -xf a.tar --to-command=cat", false},
		{"make **", "make test", true},
		{"make **", "make --eval='x:;@id' x", false},
		{"go **", "go build -o bin/app ./cmd/app", true},
		{"go **", "go run ~/x.go", false},
		{"cp **", "cp a.txt b.txt", true},
		{"cp **", "cp a.txt ~/a.txt", false},
		{"kubectl **", "kubectl get pods -n web", true},
		{"kubectl **", "kubectl exec -it api-0 -- sh", false},
		{"php **", "php artisan test", true},
		{"php **", "php -S 0.0.0.0:8080 -t public", false},
		{"python3 **", "python3 -m http.server", false},
	}
	for _, c := range cases {
		res := decideUnder(e, c.pattern, c.command)
		want := AskHuman
		if c.allow {
			want = Allow
		}
		assert.Equal(t, want, res.Decision, "%s: %q\n\t%s", c.pattern, c.command, explain(res))
	}
}
