//go:build linux && (amd64 || arm64)

package sandbox

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// newTestGroup makes a group, or skips where none can be made; what is
// left in it is killed when the test ends.
func newTestGroup(t *testing.T) *Group {
	t.Helper()
	g, err := NewGroup("test-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(time.Now().UnixNano(), 10), nil)
	if err != nil {
		t.Skipf("no cgroup for a command here: %v", err)
	}
	t.Cleanup(func() {
		g.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := KillGroup(ctx, g.Dir); err != nil {
			t.Error(err)
		}
	})
	return g
}

// A confined command is started in its group; a daemon it leaves (double
// fork, new session) stays there, cannot move itself out, is paused by
// Freeze and killed by KillGroup — on each way of making the private
// network, and without one.
func TestGroupHoldsLeftovers(t *testing.T) {
	w := newWorld(t)
	modes := ways(t)
	modes["none"] = netNone
	for name, mode := range modes {
		t.Run(name, func(t *testing.T) {
			grp := newTestGroup(t)
			g := w.grants()
			g.Loopback = mode != netNone
			exe, err := os.Executable()
			if err != nil {
				t.Fatal(err)
			}
			p, err := prepareNet(g, Options{Helper: exe, Group: grp}, mode)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			tick := filepath.Join(w.ws, "tick-"+name)
			// The daemon tries to leave its cgroup for its parent's, then
			// ticks; the command itself says where it is and ends.
			script := `cat /proc/self/cgroup | grep '^0::'
setsid bash -c 'echo $$ > "$1.pid"; echo $$ > ` + filepath.Dir(grp.Dir) + `/cgroup.procs 2> "$1.escape" || echo refused >> "$1.escape"; while :; do echo . >> "$1"; sleep 0.01; done' x "$1" </dev/null >/dev/null 2>&1 &`
			out, err := runForked(p, "/bin/bash", []string{"bash", "-c", script, "cmd", tick}, w.ws, []string{"PATH=/usr/bin:/bin"})
			if err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			if err := p.GroupErr(); err != nil {
				t.Fatalf("started outside its group: %v", err)
			}
			if want := "0::" + strings.TrimPrefix(grp.Dir, mustMount(t)); !strings.Contains(out, want) {
				t.Fatalf("the command ran in %q, want %q", out, want)
			}
			pidFile := tick + ".pid"
			waitFor(t, func() bool { b, _ := os.ReadFile(tick); return len(b) > 2 })
			b, _ := os.ReadFile(pidFile)
			pid, _ := strconv.Atoi(strings.TrimSpace(string(b)))
			if !slices.Contains(GroupPIDs(grp.Dir), pid) {
				t.Fatalf("daemon %d not in its group: %v", pid, GroupPIDs(grp.Dir))
			}
			if esc, _ := os.ReadFile(tick + ".escape"); !strings.Contains(string(esc), "refused") {
				t.Fatalf("the daemon moved itself out of its group: %q", esc)
			}
			st, err := ReadGroup(grp.Dir)
			if err != nil || !st.Populated || st.Frozen {
				t.Fatalf("state %+v, %v; want populated, not frozen", st, err)
			}

			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := Freeze(ctx, grp.Dir, true); err != nil {
				t.Fatal(err)
			}
			before, _ := os.Stat(tick)
			time.Sleep(100 * time.Millisecond)
			if after, _ := os.Stat(tick); after.Size() != before.Size() {
				t.Fatalf("paused, the daemon still wrote (%d → %d bytes)", before.Size(), after.Size())
			}
			if err := Freeze(ctx, grp.Dir, false); err != nil {
				t.Fatal(err)
			}
			waitFor(t, func() bool { after, _ := os.Stat(tick); return after.Size() > before.Size() })

			if err := KillGroup(ctx, grp.Dir); err != nil {
				t.Fatal(err)
			}
			if _, err := os.Stat(grp.Dir); !os.IsNotExist(err) {
				t.Fatalf("group not removed: %v", err)
			}
			if running(pid) {
				t.Fatalf("daemon %d still runs", pid)
			}
		})
	}
}

// running reports whether pid runs (a zombie does not).
func running(pid int) bool {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(b), ')')
	return i >= 0 && !strings.HasPrefix(string(b[i+1:]), " Z")
}

func mustMount(t *testing.T) string {
	m, err := cgroup2Mount()
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition never held")
}

func TestGroupNames(t *testing.T) {
	for _, name := range []string{"", "a/b", ".", ".."} {
		if _, err := NewGroup(name, nil); err == nil {
			t.Errorf("NewGroup(%q) made a group", name)
		}
	}
}

func TestUnescapeMount(t *testing.T) {
	for in, want := range map[string]string{`/sys/fs/cgroup`: "/sys/fs/cgroup", `/a\040b`: "/a b", `/x\`: `/x\`, `/x\04`: `/x\04`, `\134`: `\`} {
		if got := unescapeMount(in); got != want {
			t.Errorf("unescapeMount(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkGroup is what a confined command that runs code pays for its
// group: made, then removed empty.
func BenchmarkGroup(b *testing.B) {
	if _, err := ProbeGroups(); err != nil {
		b.Skipf("no cgroup for a command here: %v", err)
	}
	for i := 0; b.Loop(); i++ {
		g, err := NewGroup("bench-"+strconv.Itoa(os.Getpid())+"-"+strconv.Itoa(i), nil)
		if err != nil {
			b.Fatal(err)
		}
		g.Close()
		if err := RemoveGroup(g.Dir); err != nil {
			b.Fatal(err)
		}
	}
}
