package redact

import "sync"

// A lazy value is built on first use. The shim is a new process for every
// command and runs all package initialisation each time, while most
// commands' output holds no hint of a secret; a package-level
// sync.OnceValue would itself be built at start-up (two allocations and
// the closures that wrap build). Declared as &lazy[T]{build: f}, with f a
// function literal that captures nothing, a lazy is laid out by the
// linker and costs nothing until get.
type lazy[T any] struct {
	build func() T
	once  sync.Once
	built bool
	val   T
}

// get returns the value, building it on the first call. Should build
// panic, every later call panics too, as sync.OnceValue does, rather than
// handing out a zero value: no rules would mean nothing is redacted.
func (l *lazy[T]) get() T {
	l.once.Do(func() {
		l.val = l.build()
		l.built = true
	})
	if !l.built {
		panic("redact: building a lazily built value failed before")
	}
	return l.val
}
