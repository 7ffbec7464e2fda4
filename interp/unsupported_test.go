package interp

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"mvdan.cc/sh/v3/syntax"
)

func parse(t *testing.T, src string) *syntax.File {
	t.Helper()
	f, err := syntax.NewParser().Parse(strings.NewReader(src), "")
	require.NoError(t, err, src)
	return f
}

// TestUnsupportedTable: every entry's example is reported, with that
// entry's reason, and the reasons are distinct.
func TestUnsupportedTable(t *testing.T) {
	seen := map[string]bool{}
	for _, ft := range features() {
		t.Run(ft.reason, func(t *testing.T) {
			assert.False(t, seen[ft.reason], "reason used twice")
			seen[ft.reason] = true
			assert.Contains(t, Unsupported(parse(t, ft.example)), ft.reason, "example %q", ft.example)
		})
	}
	assert.GreaterOrEqual(t, len(seen), 60)
}

// TestUnsupportedExamplesDiffer keeps the table honest: each example, run
// under bash and under the engine made to run it anyway, has a different
// outcome. Left out: suspend and newgrp, which would stop or replace the
// test's bash, and listings whose order is random in the interpreter (they
// can match bash's by chance).
func TestUnsupportedExamplesDiffer(t *testing.T) {
	sh := bash(t)
	skip := map[string]bool{"suspend": true, "newgrp": true, "alias b=1 a=2; alias": true}
	for _, ft := range features() {
		if skip[ft.example] || strings.Contains(ft.reason, "bash's order differs") {
			continue
		}
		t.Run(ft.reason, func(t *testing.T) {
			t.Parallel()
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			dir := t.TempDir()
			var out, errb bytes.Buffer
			cmd := exec.CommandContext(ctx, sh, "-c", ft.example, "prog")
			cmd.Dir, cmd.Stdout, cmd.Stderr = dir, &out, &errb
			err := cmd.Run()
			var ee *exec.ExitError
			if err != nil && !errors.As(err, &ee) {
				require.NoError(t, err)
			}
			want := engineOutcome{strings.ReplaceAll(out.String(), dir, "DIR"), strings.ReplaceAll(errb.String(), dir, "DIR"), status(cmd.ProcessState)}

			dir = t.TempDir()
			out.Reset()
			errb.Reset()
			res, err := runEngine(ctx, EngineOptions{
				Program: ft.example, Name: "prog", Dir: dir, Env: os.Environ(),
				Stdout: &out, Stderr: &errb, MaxBytes: 1 << 20, Check: allowAll,
			}, false)
			require.NoError(t, err)
			got := engineOutcome{strings.ReplaceAll(out.String(), dir, "DIR"), strings.ReplaceAll(errb.String(), dir, "DIR"), res.ExitStatus}
			assert.NotEqual(t, want, got, "%q runs the same under the engine", ft.example)
		})
	}
}

// TestUnsupportedClean: programs the engine runs as bash does are not
// reported: the corpus programs not listed as refused, and typical script
// idioms close to the reported features.
func TestUnsupportedClean(t *testing.T) {
	diffs := readDifferences(t)
	var clean []string
	for _, p := range readEnginePrograms(t) {
		_, err := syntax.NewParser().Parse(strings.NewReader(p.src), "")
		if err == nil && !strings.HasPrefix(diffs[p.name], "refused:") {
			clean = append(clean, p.src)
		}
	}
	clean = append(clean,
		`set -euo pipefail; x=$(git rev-parse HEAD); echo "$x"`,
		`set -e; x=$(cd "$dir" && pwd)`,
		`sleep 1 & pid=$!; wait $pid; wait "$!"`,
		`nohup server > log 2>&1 &`,
		`cd "$dir"; cd -; cd`,
		`while IFS= read -r line; do echo "$line"; done < file; read -ra parts <<< "a b"`,
		`mapfile -t lines < <(ls); readarray -d , -t xs <<< "a,b"`,
		`printf '%s\n' "$x"; printf '%-10s|%05d|%x|%%\n' a 1 255; printf "$fmt" 1`,
		`trap 'rm -f "$tmp"' EXIT; trap - EXIT; trap '' ERR`,
		`f() { local x=1; local -a a=(1); declare -g G=1; echo "$x"; }; f`,
		`export PATH="$HOME/bin:$PATH"; readonly R=1; declare -x X=1; declare -p X`,
		`echo -e '\e[1mbold\e[0m\ttab'; echo -n x; echo -- -e`,
		`[ "$a" = "$b" ] && [[ $a < $b ]] && test -n "$a"`,
		`command -v git >/dev/null; type -P ls; type -t echo; command git status`,
		`shopt -s nullglob globstar; shopt -u dotglob; set -o pipefail; set +e; set -- a b`,
		`declare -A m=([a]=1); m[k]=v; echo "${m[a]}" "${m[$k]}"`,
		`kill() { echo mine; }; kill 1; jobs() { :; }; jobs`,
		`exec > log 2>&1; exec 2>/dev/null; echo hi >&2; cat <<'EOF'
$x
EOF`,
		`echo $((RANDOM % 10)) $LINENO "$@" $# $? $0 ${BASH_REMATCH[1]}`,
		`while getopts ab: o; do :; done; shift $((OPTIND - 1))`,
		`x=${y:-default}; x=${x^^}; x=${x//a/b}; x=${x@U}; x=${x#*/}`,
		`(( i++ )); let i=i+1; for ((i=0; i<3; i++)); do :; done`,
		`eval "$cmd"; eval 'echo literal'; source ./lib.sh; . "$f"`,
		`exec "$@"`,
		`time_left=5; SECONDS_LEFT=1; echo "$time_left $SECONDS_LEFT"`,
		`f() { false; }; trap 'echo err' EXIT; f || true`,
	)
	for _, src := range clean {
		assert.Empty(t, Unsupported(parse(t, src)), "%s", src)
	}
}

// TestUnsupportedContext covers what the table cannot show with one
// example: nesting, shadowing, options and eval.
func TestUnsupportedContext(t *testing.T) {
	for _, tc := range []struct {
		src  string
		set  []string
		want string // "" means nothing is reported
	}{
		{`eval 'kill 1'`, nil, "`kill` builtin"},
		{`eval "kill $pid"`, nil, ""},
		{`trap 'kill $pid' EXIT`, nil, "`kill` builtin"},
		{`trap "$action" EXIT`, nil, ""},
		{`command kill 1`, nil, "`kill` builtin"},
		{`builtin ulimit -n`, nil, "`ulimit` builtin"},
		{`exec kill 1`, nil, "`kill` builtin"},
		{`f() { trap 'echo x' EXIT; }; f`, nil, ""},
		{`x=$(trap 'echo x' EXIT; true)`, nil, "EXIT trap inside a subshell"},
		{`echo | { trap 'echo x' EXIT; cat; }`, nil, "EXIT trap inside a subshell"},
		{`trap -- 'exit 1' EXIT`, nil, "leaves a trap"},
		{`trap 'cleanup; return' ERR`, nil, "leaves a trap"},
		{`x=$(false; echo y)`, nil, ""},
		{`x=$(false; echo y)`, []string{"-errexit"}, "under set -e"},
		{`set -o errexit; x=$(f)`, nil, ""},
		{`f() { :; }; set -o errexit; x=$(f)`, nil, "under set -e"},
		{`true`, []string{"-noclobber"}, "set -o noclobber"},
		{`true`, []string{"-O:lastpipe"}, "shopt lastpipe"},
		{`true`, []string{"-errexit", "+posix", "-hashall", "-O:extglob"}, ""},
		{`(( SECONDS > 5 ))`, nil, "$SECONDS"},
		{`echo $(( EPOCHSECONDS ))`, nil, "$EPOCHSECONDS"},
		{`[[ -v BASH_VERSION ]]`, nil, "$BASH_VERSION"},
		{`echo "${BASH_VERSINFO[0]}"`, nil, "$BASH_VERSINFO"},
		{`echo $!`, nil, "$!"},
		{`declare -A m; for k in "${!m[@]}"; do :; done`, nil, "associative array"},
		{`local -A m; echo "${m[@]}"`, nil, "associative array"},
		{`read -p "name? " n`, nil, "`read` with an option"},
		{`read -rsa arr`, nil, ""},
		{`mapfile -d '' -t xs`, nil, ""},
		{`local - ; set -e`, nil, "option of declare"},
		{`declare +x X`, nil, "option of declare"},
		{`export`, nil, "prints variables"},
		{`declare -A m; declare -p m`, nil, "prints variables"},
		{`f() { :; }; type f`, nil, "`type` on a function"},
		{`echo x >&"$fd"`, nil, "`>&` other than"},
		{`cat 0<<EOF
x
EOF`, nil, ""},
		{`printf '%(%Y)T' -1`, nil, "`printf` conversion"},
		{`printf "%s %q" a b`, nil, "`printf` conversion"},
		{`printf -- '%s' x`, nil, "`printf` with an option"},
		{`echo -ne 'a\0b'`, nil, "`echo -e`"},
		{`echo 'a\cb'`, nil, ""},
		{`[ "$a" \> "$b" ]`, nil, "with `<` or `>`"},
		{`set -- -x; set -x`, nil, ""},
		{`set -eo noclobber`, nil, "sets a shell option"},
		{`set -euxo pipefail`, nil, ""},
		{`shopt extglob`, nil, "uses `shopt`"},
		{`shopt -s extglob nocasematch`, nil, "uses `shopt`"},
		{`x=1 &`, nil, ""},
		{`{ sleep 1; echo; } & wait`, nil, ""},
		{`while true; do :; done &`, nil, "in the background"},
		{`f() { :; }; f &`, nil, "in the background"},
		{`let 'x = 1'`, nil, "`let` with a quoted"},
		{`echo ${x/%.c/.o}`, nil, "anchored replacement"},
		{`echo ${x//+(a)/b}`, nil, "extended glob"},
		{`echo ${x@A} ${x@P}`, nil, "transformation"},
		{`cd -L /tmp`, nil, "`cd` with an option"},
		{`exec -c env`, nil, "`exec` with an option"},
		{`PS4='+ $LINENO: '`, nil, "assigns a variable"},
	} {
		got := Unsupported(parse(t, tc.src), tc.set...)
		if tc.want == "" {
			assert.Empty(t, got, "%s %v", tc.src, tc.set)
			continue
		}
		assert.True(t, containsSub(got, tc.want), "%s %v: want %q in %q", tc.src, tc.set, tc.want, got)
	}
}

func containsSub(reasons []string, sub string) bool {
	for _, r := range reasons {
		if strings.Contains(r, sub) {
			return true
		}
	}
	return false
}

// TestUnsupportedNoRepeats: a feature used many times is reported once.
func TestUnsupportedNoRepeats(t *testing.T) {
	got := Unsupported(parse(t, "kill 1; kill 2; (kill 3); x=$(kill 4)"))
	assert.Equal(t, []string{"uses the `kill` builtin, which the engine does not implement as bash does"}, got)
	assert.Equal(t, []string{"no program"}, Unsupported(nil))
}

// FuzzUnsupported: any program that parses can be examined without a panic.
func FuzzUnsupported(f *testing.F) {
	for _, ft := range features() {
		f.Add(ft.example)
	}
	f.Add(`eval "eval 'eval kill'"`)
	f.Fuzz(func(t *testing.T, src string) {
		file, err := syntax.NewParser().Parse(strings.NewReader(src), "")
		if err != nil {
			return
		}
		got := Unsupported(file, "-errexit")
		// A feature is refused wherever it sits: after or before another
		// command, or in a group. (Else wrapping a program would get it
		// run by an engine that runs it otherwise than bash.)
		for _, wrapped := range []string{src + "\n:\n", ":\n" + src, "{\n" + src + "\n}"} {
			wf, err := syntax.NewParser().Parse(strings.NewReader(wrapped), "")
			if err != nil || len(wf.Stmts) == 0 {
				continue
			}
			have := Unsupported(wf, "-errexit")
			for _, r := range got {
				if !slices.Contains(have, r) {
					t.Fatalf("%q is reported for %q but not for %q (%q)", r, src, wrapped, have)
				}
			}
		}
	})
}
