//go:build linux && (amd64 || arm64)

package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// What a confined command leaves running. Landlock and seccomp hold every
// process a command starts, daemons included, but only a cgroup says
// which processes those are once the command has ended: a process can
// leave its process group, its session and its parent, never its cgroup
// without writing the cgroup file system, which no sandbox here grants.
// A Group is a cgroup (version 2) made for one command, which the command
// is started into (clone3's CLONE_INTO_CGROUP: no moment outside it).
// While it has processes the shim knows they are there, can pause them
// (Freeze) while something runs that they must not race, and can name
// them; when it is empty it is removed.

// groupsDir is the directory, in this process's cgroup tree, under which
// groups are made.
const groupsDir = "execgate"

// Group is a cgroup made for one confined command.
type Group struct {
	// Dir is the cgroup's directory in the cgroup file system.
	Dir string
	fd  int
}

// NewGroup makes a group named name (a single path element) for one
// command, and removes empty groups whose names gone says are over (the
// shim that made them was killed before it could). It fails where this process can make no cgroup: no cgroup v2
// hierarchy, a read-only one (most containers), or a cgroup of this
// process's that belongs to someone else (a login session's scope, which
// systemd owns; a user's manager, user@UID.service, delegates its own).
func NewGroup(name string, gone func(name string) bool) (*Group, error) {
	if name == "" || strings.ContainsRune(name, '/') || name == "." || name == ".." {
		return nil, fmt.Errorf("cgroup: bad name %q", name)
	}
	base, err := groupBase()
	if err != nil {
		return nil, err
	}
	parent := filepath.Join(base, groupsDir)
	if err := os.Mkdir(parent, 0o755); err != nil && !errors.Is(err, os.ErrExist) {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	dir := filepath.Join(parent, name)
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	fd, err := unix.Open(dir, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		os.Remove(dir)
		return nil, fmt.Errorf("cgroup: %w", err)
	}
	if gone != nil {
		sweep(parent, name, gone)
	}
	return &Group{Dir: dir, fd: fd}, nil
}

// ProbeGroups says where groups are made, or why none can be: it makes
// one and removes it.
func ProbeGroups() (string, error) {
	g, err := NewGroup("probe-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(time.Now().UnixNano(), 36), nil)
	if err != nil {
		return "", err
	}
	g.Close()
	return filepath.Dir(g.Dir), RemoveGroup(g.Dir)
}

// Close releases g's descriptor; the cgroup stays (see RemoveGroup).
func (g *Group) Close() error {
	if g == nil || g.fd < 0 {
		return nil
	}
	err := unix.Close(g.fd)
	g.fd = -1
	return err
}

// into returns sys with the child started inside g (sys unchanged when g
// is nil).
func (g *Group) into(sys *syscall.SysProcAttr) *syscall.SysProcAttr {
	if g == nil || g.fd < 0 {
		return sys
	}
	out := syscall.SysProcAttr{}
	if sys != nil {
		out = *sys
	}
	out.UseCgroupFD, out.CgroupFD = true, g.fd
	return &out
}

// groupBase is the highest cgroup of this process's own line (its cgroup
// and its ancestors, within the mounted hierarchy) that belongs to this
// process's user: everything for root, the delegated subtree for a user.
func groupBase() (string, error) {
	mnt, err := cgroup2Mount()
	if err != nil {
		return "", err
	}
	own, err := ownCgroup()
	if err != nil {
		return "", err
	}
	uid := uint32(os.Geteuid())
	base := ""
	for p := filepath.Join(mnt, own); ; p = filepath.Dir(p) {
		var st unix.Stat_t
		if err := unix.Stat(p, &st); err != nil || (st.Uid != uid && uid != 0) {
			break
		}
		base = p
		if p == mnt || len(p) < len(mnt) {
			break
		}
	}
	if base == "" {
		return "", fmt.Errorf("cgroup: this process's cgroup %s belongs to another user", own)
	}
	if unix.Access(base, unix.W_OK) != nil {
		return "", fmt.Errorf("cgroup: %s is not writable", base)
	}
	return base, nil
}

// ownCgroup is this process's cgroup in the version 2 hierarchy, from
// /proc/self/cgroup ("0::/path").
func ownCgroup() (string, error) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	for _, line := range bytes.Split(b, []byte{'\n'}) {
		if p, ok := bytes.CutPrefix(line, []byte("0::")); ok && len(p) > 0 && p[0] == '/' {
			return filepath.Clean(string(p)), nil
		}
	}
	return "", errors.New("cgroup: this process is in no cgroup version 2 hierarchy")
}

// cgroup2Mount is where the cgroup version 2 hierarchy is mounted, with
// its own root mounted there (not a container's view of a subtree it
// cannot name).
func cgroup2Mount() (string, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return "", fmt.Errorf("cgroup: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		// id parent major:minor root mountpoint options… - fstype source superoptions
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		if !ok || !strings.HasPrefix(post, "cgroup2 ") {
			continue
		}
		fields := strings.Fields(pre)
		if len(fields) < 5 || fields[3] != "/" {
			continue
		}
		if strings.Contains(","+fields[5]+",", ",ro,") {
			return "", fmt.Errorf("cgroup: %s is mounted read-only", fields[4])
		}
		return unescapeMount(fields[4]), nil
	}
	return "", errors.New("cgroup: no cgroup version 2 hierarchy is mounted")
}

// unescapeMount undoes mountinfo's octal escapes (\040 for a space).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if n, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(n))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// GroupState is what a group's cgroup.events says.
type GroupState struct {
	// Populated: some process is in it.
	Populated bool
	// Frozen: every process in it is paused.
	Frozen bool
}

// ReadGroup reads the state of the group at dir; an error wrapping
// fs.ErrNotExist means it is gone.
func ReadGroup(dir string) (GroupState, error) {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.events"))
	if err != nil {
		return GroupState{}, err
	}
	var st GroupState
	for _, line := range strings.Split(string(b), "\n") {
		switch line {
		case "populated 1":
			st.Populated = true
		case "frozen 1":
			st.Frozen = true
		}
	}
	return st, nil
}

// GroupPIDs lists the processes in the group at dir.
func GroupPIDs(dir string) []int {
	b, err := os.ReadFile(filepath.Join(dir, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var out []int
	for _, f := range strings.Fields(string(b)) {
		if n, err := strconv.Atoi(f); err == nil {
			out = append(out, n)
		}
	}
	return out
}

// maxSwept bounds how many groups one NewGroup looks at for removal.
const maxSwept = 64

// sweep removes, from parent, up to maxSwept empty groups other than
// keep for which gone says their maker is gone: an empty group whose
// maker still runs may be about to take its command.
func sweep(parent, keep string, gone func(name string) bool) {
	f, err := os.Open(parent)
	if err != nil {
		return
	}
	names, _ := f.Readdirnames(-1)
	f.Close()
	seen := 0
	for _, name := range names {
		if strings.HasPrefix(name, "cgroup.") || strings.Contains(name, ".") || name == keep {
			continue // the parent's own files (cgroup.procs, cpu.stat…)
		}
		if seen++; seen > maxSwept {
			return
		}
		dir := filepath.Join(parent, name)
		if st, err := ReadGroup(dir); err == nil && !st.Populated && gone(name) {
			RemoveGroup(dir)
		}
	}
}

// KillGroup kills every process in the group at dir (cgroup.kill, Linux
// 5.14) and removes it once they are gone, or fails when ctx ends first.
func KillGroup(ctx context.Context, dir string) error {
	if err := os.WriteFile(filepath.Join(dir, "cgroup.kill"), []byte("1"), 0); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("cgroup: %w", err)
	}
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 20*time.Millisecond) {
		if st, err := ReadGroup(dir); err != nil || !st.Populated {
			return RemoveGroup(dir)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cgroup: %s still has processes: %w", dir, ctx.Err())
		case <-time.After(delay):
		}
	}
}

// RemoveGroup removes the group at dir, which must be empty.
func RemoveGroup(dir string) error {
	err := unix.Rmdir(dir)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	return err
}

// Freeze pauses (on) or resumes every process in the group at dir. Pausing
// returns once the kernel says they all are, or fails when ctx ends first.
func Freeze(ctx context.Context, dir string, on bool) error {
	v := "0"
	if on {
		v = "1"
	}
	if err := os.WriteFile(filepath.Join(dir, "cgroup.freeze"), []byte(v), 0); err != nil {
		return fmt.Errorf("cgroup: %w", err)
	}
	if !on {
		return nil
	}
	for delay := 100 * time.Microsecond; ; delay = min(2*delay, 20*time.Millisecond) {
		st, err := ReadGroup(dir)
		if err != nil {
			return fmt.Errorf("cgroup: %w", err)
		}
		if st.Frozen || !st.Populated {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("cgroup: %s did not pause: %w", dir, ctx.Err())
		case <-time.After(delay):
		}
	}
}
