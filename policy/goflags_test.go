package policy

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// TestInertGoflags: GOFLAGS made only of flags that choose how go builds
// and tests what it was given (-count=1, -mod=vendor, -race, -tags=…)
// needs review and runs confined with the build; a flag that runs
// another program, reads another build description, passes flags to the
// compiler or linker, or writes elsewhere keeps GOFLAGS dangerous, as
// does a value only known at run time.
func TestInertGoflags(t *testing.T) {
	w := newWorld(t)
	for _, cmd := range []string{
		"GOFLAGS=-count=1 go test ./internal/store",
		`GOFLAGS="-mod=vendor -tags=integration,slow" go test ./...`,
		"GOFLAGS=-race go test -run TestX ./...",
		"GOFLAGS='-v -p=2 -trimpath -buildvcs=false' go build ./...",
		"GOFLAGS=--count=1 go test ./...",
	} {
		res := w.analyze(cmd)
		assert.Equal(t, NeedsReview, res.Risk, "%q: %v", cmd, res.Reasons)
		n := NeedsOf(res, w.ws, w.home)
		assert.True(t, n.Within(), "%q: %+v", cmd, n)
		assert.True(t, n.RunCode, "%q: %+v", cmd, n)
	}
	for _, cmd := range []string{
		"GOFLAGS=-toolexec=/tmp/x go list ./...",
		"GOFLAGS=--toolexec=./wrap go build",
		"GOFLAGS='-count=1 -exec=./run' go test ./...",
		"GOFLAGS=-vettool=./x go vet ./...",
		"GOFLAGS=-overlay=o.json go build",
		"GOFLAGS=-modfile=/tmp/go.mod go build",
		"GOFLAGS=-ldflags=-extld=/tmp/ld go build",
		"GOFLAGS=-gcflags=all=-N go build",
		"GOFLAGS=-o=/tmp/bin go build",
		"GOFLAGS=-tags=$(id) go build",
		"GOFLAGS=$FLAGS go test",
		"GOFLAGS= go test",
		"GOFLAGS=count=1 go test",
		"GOFLAGS+=-race go test",
	} {
		res := w.analyze(cmd)
		assert.Equal(t, Dangerous, res.Risk, "%q: %v", cmd, res.Reasons)
	}
}
