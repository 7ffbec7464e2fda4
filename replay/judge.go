package replay

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/execgate/execgate/config"
	"github.com/execgate/execgate/policy"
)

// Judge decides on commands as the shim would under one configuration,
// without running them. It is safe for concurrent use.
type Judge struct {
	Engine *policy.Engine
	// Trust recognises an agent's envelope around a command, as the shim
	// does, so that the payload is what is judged.
	Trust policy.Trust
	// Agent is the policy id a command is judged under, given the agent
	// its transcript belongs to ("" when the format belongs to none).
	Agent func(transcript string) string
	// Request is the request the shim would build for agent: its policy
	// (with the session's override), allowlist, denylist, home, own files
	// and starting environment. It is asked once per agent.
	Request func(agent string) policy.Request
	// Refusal, when set, is the line every command is refused with: the
	// configuration exists but cannot be used, and the shim refuses
	// everything then.
	Refusal string
	// Confine says the machine can confine commands (sandbox.Probe), as
	// the shim would here: a command whose needs fit the sandbox then runs
	// confined, unasked, instead of asking.
	Confine bool
	// Hosts are the hosts agent's confined commands may reach through
	// the shim's proxy (agents.NAME.sandbox.hosts): a download from a
	// registry among them runs confined (policy.Needs.WithHosts). Nil
	// means none.
	Hosts func(agent string) []string

	mu       sync.Mutex
	requests map[string]policy.Request
	dirs     map[string]bool
	// recent holds the latest verdicts: agents run the same commands in
	// the same directory over and over (git status, the test suite), and
	// within one replay the same command in the same place is judged the
	// same (nothing is run, nothing on disk changes).
	recent *lru[Verdict]
}

// Verdict is the decision on one command.
type Verdict struct {
	policy.Result
	// Agent is the policy id it was judged under, and Policy that
	// agent's policy.
	Agent  string
	Policy config.Policy
	// Cwd is the directory it was judged in; "" for an unknown one.
	Cwd string
	// Unknown says why it was judged in an unknown directory; "" when it
	// was judged in its own.
	Unknown string
	// Proposals are, for each segment that needed approval (Segments'
	// order, nil for the others), the allowlist patterns the policy
	// proposes for it, narrowest first; nil unless the command asks.
	Proposals [][]string
}

// Why a command is judged in an unknown directory.
const (
	UnknownUnrecorded = "the transcript does not say where it ran"
	UnknownGone       = "the directory it ran in no longer exists"
)

// Bounds on what a Judge remembers.
const (
	maxDirs   = 4096
	maxRecent = 2048
)

// Evaluate judges c: in its recorded directory when that still exists
// (relative paths in it name what they named then), otherwise in an
// unknown directory, where nothing relative can be proven safe.
func (j *Judge) Evaluate(c Command) Verdict {
	agent := j.Agent(c.Agent)
	req := j.request(agent)
	v := Verdict{Agent: agent, Policy: req.Policy}
	switch {
	case c.Cwd == "" || !filepath.IsAbs(c.Cwd):
		v.Unknown = UnknownUnrecorded
	case !j.isDir(c.Cwd):
		v.Unknown = UnknownGone
	default:
		v.Cwd = filepath.Clean(c.Cwd)
		// As the agents' hooks judge a command run outside the session's
		// project: against the project.
		if c.Root != "" && filepath.IsAbs(c.Root) && !within(v.Cwd, filepath.Clean(c.Root)) && j.isDir(c.Root) {
			req.Workspace = filepath.Clean(c.Root)
		}
	}
	req.Cwd, req.Dialect = v.Cwd, c.Dialect
	key := strings.Join([]string{agent, v.Cwd, v.Unknown, req.Workspace, fmt.Sprint(c.Dialect), c.Text}, "\x00")
	if cached, ok := j.remembered(key); ok {
		return cached
	}
	// As the shim and `execgate check`: an agent's envelope is judged by
	// its payload, unless the payload re-aims the envelope.
	req.Command = c.Text
	env, wrapped := j.Trust.UnwrapAs(c.Text, nil, c.Dialect)
	if wrapped {
		req.Command = env.Payload
	}
	res := j.Engine.Evaluate(req)
	if wrapped && !env.Holds(res) {
		req.Command = c.Text
		res = j.Engine.Evaluate(req)
	}
	if j.Refusal != "" {
		res.Decision = policy.Deny
		res.Reasons = append([]string{j.Refusal}, res.Reasons...)
	}
	needs := policy.NeedsOf(res, v.Cwd, req.Home)
	if j.Hosts != nil && len(needs.Downloads) > 0 {
		needs = needs.WithHosts(j.Hosts(agent), req.Getenv)
	}
	if j.Refusal == "" && policy.CanConfine(req.Policy, res, needs, j.Confine) {
		res.Decision = decisionConfined
	}
	v.Result = res
	if res.Decision == policy.AskHuman {
		v.Proposals = make([][]string, len(res.Segments))
		for i, s := range res.Segments {
			if !s.Covered {
				v.Proposals[i] = j.Engine.Proposals(s)
			}
		}
	}
	j.remember(key, v)
	return v
}

// request is the shim's request for agent, built once.
func (j *Judge) request(agent string) policy.Request {
	j.mu.Lock()
	defer j.mu.Unlock()
	req, ok := j.requests[agent]
	if !ok {
		req = j.Request(agent)
		if j.requests == nil {
			j.requests = map[string]policy.Request{}
		}
		j.requests[agent] = req
	}
	return req
}

func (j *Judge) remembered(key string) (Verdict, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.recent == nil {
		return Verdict{}, false
	}
	return j.recent.get(key)
}

func (j *Judge) remember(key string, v Verdict) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.recent == nil {
		j.recent = newLRU[Verdict](maxRecent)
	}
	j.recent.put(key, v)
}

// isDir reports whether dir is a directory now, remembering the answer.
func (j *Judge) isDir(dir string) bool {
	j.mu.Lock()
	ok, seen := j.dirs[dir]
	j.mu.Unlock()
	if seen {
		return ok
	}
	st, err := os.Stat(dir)
	ok = err == nil && st.IsDir()
	j.mu.Lock()
	if len(j.dirs) >= maxDirs || j.dirs == nil {
		j.dirs = map[string]bool{}
	}
	j.dirs[dir] = ok
	j.mu.Unlock()
	return ok
}

// within reports whether dir is root or below it; both are clean and
// absolute.
func within(dir, root string) bool {
	return dir == root || root == "/" || strings.HasPrefix(dir, root+"/")
}
