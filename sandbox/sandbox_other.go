//go:build !linux || !(amd64 || arm64)

package sandbox

import (
	"context"
	"errors"
	"os"
	"runtime"
	"syscall"
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

// HelperArg is the first argument that makes execgate's program the
// sandbox's helper; there is none on this system.
const HelperArg = "__execgate-sandbox-netns"

// Options say how a confinement is made.
type Options struct {
	Helper   string
	OnProxy  func(*os.File)
	Enclosed bool
	Group    *Group
}

// PrepareWith fails: this system cannot confine.
func PrepareWith(g Grants, o Options) (*Prepared, error) { return Prepare(g) }

// NeedsChild reports false: nothing is confined here.
func (p *Prepared) NeedsChild() bool { return false }

// LoopbackErr says why there was no private loopback network.
func (p *Prepared) LoopbackErr() error { return errors.New(probe().Reason) }

// ForkExec fails without starting anything.
func (p *Prepared) ForkExec(path string, argv []string, attr *syscall.ProcAttr) (int, func(), error) {
	return 0, func() {}, errors.New(probe().Reason)
}

// HelperMain exits: there is no helper on this system.
func HelperMain(args []string) { os.Exit(126) }

// ProbeLoopback says why there is no private loopback network here.
func ProbeLoopback(o Options) error { return errors.New(probe().Reason) }

// Group is a cgroup made for one confined command; there are none here.
type Group struct{ Dir string }

// NewGroup fails: this system has no cgroups execgate uses.
func NewGroup(name string, gone func(string) bool) (*Group, error) {
	return nil, errors.New(probe().Reason)
}

// Close does nothing here.
func (g *Group) Close() error { return nil }

// GroupState is what a group's cgroup.events says.
type GroupState struct{ Populated, Frozen bool }

// ReadGroup fails: there are no groups here.
func ReadGroup(dir string) (GroupState, error) { return GroupState{}, os.ErrNotExist }

// GroupPIDs lists nothing here.
func GroupPIDs(dir string) []int { return nil }

// RemoveGroup does nothing here.
func RemoveGroup(dir string) error { return nil }

// Freeze fails: there are no groups here.
func Freeze(ctx context.Context, dir string, on bool) error { return errors.New(probe().Reason) }

// GroupErr is nil: nothing is started here.
func (p *Prepared) GroupErr() error { return nil }

// ChildAttr is nil here.
func (p *Prepared) ChildAttr() *syscall.SysProcAttr { return nil }

// KillGroup does nothing here.
func KillGroup(ctx context.Context, dir string) error { return nil }

// ProbeGroups says why no group can be made here.
func ProbeGroups() (string, error) { return "", errors.New(probe().Reason) }

// DropGroup reports false: there are no groups here.
func (p *Prepared) DropGroup(err error) bool { return false }
