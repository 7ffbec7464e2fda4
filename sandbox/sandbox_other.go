//go:build !linux || !(amd64 || arm64)

package sandbox

import (
	"errors"
	"runtime"
)

func probe() Status {
	return Status{Reason: "confining commands needs Linux's Landlock; " + runtime.GOOS + "/" + runtime.GOARCH + " has none that execgate uses"}
}

// Prepared is a confinement ready to apply; there is none on this system.
type Prepared struct{ grants Grants }

// Grants returns what p allows.
func (p *Prepared) Grants() Grants { return p.grants }

// Close does nothing here.
func (p *Prepared) Close() error { return nil }

// Prepare fails: this system cannot confine.
func Prepare(g Grants) (*Prepared, error) { return nil, errors.New(probe().Reason) }

// OnThread fails without running fn.
func (p *Prepared) OnThread(fn func() error) (func(), error) {
	return func() {}, errors.New(probe().Reason)
}
