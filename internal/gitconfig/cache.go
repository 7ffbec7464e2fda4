package gitconfig

import (
	"slices"
	"sync"
)

// Cache keeps what Load found while the files it read can be taken as
// unchanged: while one command is judged, which reads the same
// repository's configuration several times (its own judging, the shim's
// watch over the hooks). Stop ends that, before the command runs: from
// then on Load reads the disk every time, as a command judged after
// another ran must see what that one changed.
//
// A nil *Cache is Load without a cache.
type Cache struct {
	mu      sync.Mutex
	stopped bool
	kept    []cached
}

// cached is one Load: what it was asked, the environment it read, and
// what it found.
type cached struct {
	dir, home string
	params    []Param
	env       []envRead
	cfg       *Config
	err       error
}

// envRead is one variable Load read, and its value.
type envRead struct{ name, value string }

// Load is Load, answered from the cache when an earlier Load was asked
// the same (directory, home, parameters) and every variable it read has
// the same value under o.Getenv.
func (c *Cache) Load(o Options) (*Config, error) {
	if c == nil {
		return Load(o)
	}
	getenv := o.Getenv
	if getenv == nil {
		getenv = func(string) string { return "" }
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.stopped {
		for _, k := range c.kept {
			if k.matches(o, getenv) {
				if k.cfg == nil {
					return nil, k.err
				}
				cfg := *k.cfg // its later reads of the environment are the caller's
				cfg.env = getenv
				return &cfg, nil
			}
		}
	}
	var reads []envRead
	o.Getenv = func(name string) string {
		v := getenv(name)
		reads = append(reads, envRead{name, v})
		return v
	}
	cfg, err := Load(o)
	if cfg != nil {
		cfg.env = getenv
	}
	if !c.stopped {
		c.kept = append(c.kept, cached{dir: o.Dir, home: o.Home, params: slices.Clone(o.Params), env: reads, cfg: cfg, err: err})
	}
	return cfg, err
}

// Stop empties the cache and keeps nothing from now on.
func (c *Cache) Stop() {
	if c == nil {
		return
	}
	c.mu.Lock()
	c.stopped, c.kept = true, nil
	c.mu.Unlock()
}

func (k cached) matches(o Options, getenv func(string) string) bool {
	if k.dir != o.Dir || k.home != o.Home || !slices.Equal(k.params, o.Params) {
		return false
	}
	for _, r := range k.env {
		if getenv(r.name) != r.value {
			return false
		}
	}
	return true
}
