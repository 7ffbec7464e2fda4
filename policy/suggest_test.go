package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/pattern"
)

func TestSuggest(t *testing.T) {
	e, err := NewEngine()
	require.NoError(t, err)
	tests := []struct {
		command string
		want    []string // one per segment
	}{
		{"git status", []string{"git status **"}},
		{"git -C sub log --oneline", []string{"git -C sub log **"}},
		{"git --version", []string{"git --version"}},
		{"npm test", []string{"npm test **"}},
		{"npm run build -- --watch", []string{"npm run build **"}},
		{"pnpm install", []string{"pnpm install **"}},
		{"yarn run lint", []string{"yarn run lint **"}},
		{"cargo build --release", []string{"cargo build **"}},
		{"cargo run --bin x", []string{"cargo run **"}},
		{"xargs -n1 echo", []string{"echo **"}}, // judged by the command inside
		{"go test ./...", []string{"go test **"}},
		{"go run ./cmd/tool", []string{"go run ./cmd/tool **"}},
		{"docker ps -a", []string{"docker ps **"}},
		{"docker compose up -d", []string{"docker compose up **"}},
		{"kubectl get pods -n x", []string{"kubectl get pods **"}},
		{"make test", []string{"make test **"}},
		{"make", []string{"make"}},
		{"/usr/bin/git status", []string{"/usr/bin/git status **"}},
		{"mkdir -p build", []string{"mkdir **"}},
		{"touch a.txt", []string{"touch **"}},
		{"npx tsc --noEmit", []string{"npx tsc **"}},
		{"python3 manage.py migrate", []string{"python3 manage.py **"}},
		{"python3 -c 'print(1)'", []string{"python3 -c print(1)"}},
		// Shells and inline code never get `**`.
		{"bash build.sh", []string{"bash build.sh"}},
		// Dangerous: the exact command only.
		{"rm -rf /", []string{"rm -rf /"}},
		{"git push --force origin main", []string{"git push --force origin main"}},
		{"sudo ls", []string{""}},
		{"node", []string{""}}, // opaque: the allowlist does not apply
		// Several segments each get their own pattern.
		{"mkdir -p out && go build -o out/x .", []string{"mkdir **", "go build **"}},
		// Words a pattern cannot hold literally.
		{"rm -rf '/my dir'", []string{""}},
		// A write to a path known only at run time is firm: `touch **`
		// would never cover it, and the exact shape would stand for any.
		{`touch "$F"`, []string{""}},
		// Firm reasons take the exact command, and only a bare one.
		{"cat ~/.ssh/id_rsa", []string{""}}, // ~ is only known at run time
		{"LD_PRELOAD=/tmp/x.so ls", []string{""}},
		{"echo hi > ~/.bashrc", []string{""}},
		// A relative program is a different one in each directory.
		{"./scripts/run.sh", []string{""}},
		{`rm -rf "/$F"`, []string{""}},
		{"$CMD x", []string{""}},
	}
	for _, tt := range tests {
		t.Run(tt.command, func(t *testing.T) {
			res := e.Evaluate(Request{Command: tt.command, Cwd: testWorkspace, Home: testHome, Policy: config.BuiltinPolicy()})
			var got []string
			for _, s := range res.Segments {
				got = append(got, e.Suggest(s))
			}
			assert.Equal(t, tt.want, got)
			for _, p := range got {
				if p != "" {
					assert.NoError(t, pattern.ValidatePattern(p))
				}
			}
		})
	}
}

// TestSuggestMatches checks that a suggested pattern lets the same command
// through next time, and that the pattern for a dangerous command does not
// cover a longer one.
func TestSuggestMatches(t *testing.T) {
	e, err := NewEngine()
	require.NoError(t, err)
	for _, tt := range []struct{ first, again, other string }{
		{"git status", "git status --short", "git push"},
		{"npm run build", "npm run build -- --prod", "npm run deploy"},
		{"rm -rf /", "rm -rf /", "rm -rf / /home"},
		{"mkdir -p out", "mkdir x", "rmdir x"},
	} {
		t.Run(tt.first, func(t *testing.T) {
			base := Request{Cwd: testWorkspace, Home: testHome, Policy: config.BuiltinPolicy()}
			req := base
			req.Command = tt.first
			res := e.Evaluate(req)
			require.Len(t, res.Segments, 1)
			p := e.Suggest(res.Segments[0])
			require.NotEmpty(t, p)
			base.Allow = pattern.NewMatcher([]pattern.Entry{{Pattern: p}}, nil)
			for cmd, want := range map[string]bool{tt.again: true, tt.other: false} {
				req := base
				req.Command = cmd
				res := e.Evaluate(req)
				require.Len(t, res.Segments, 1)
				assert.Equal(t, want, res.Segments[0].Allowlist != "", "%s under %q", cmd, p)
			}
		})
	}
}

func TestSuggestNil(t *testing.T) {
	e, err := NewEngine()
	require.NoError(t, err)
	assert.Empty(t, e.Suggest(nil))
	assert.Empty(t, e.Suggest(&Segment{Text: "x", Opaque: true, Argv: []string{"x"}}))
}
