package pathres

import (
	"errors"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"

	"github.com/execgate/execgate/internal/treetest"
)

// FuzzResolve checks the resolver against the kernel: whenever the
// kernel finds a file at a path, the resolver names the same file; it
// never panics, and what it returns is absolute and clean or unknown with
// a reason.
func FuzzResolve(f *testing.F) {
	for _, s := range []string{"a/b/key", "a/b/dir/id_rsa", "a/up/a/b/key", "a/b/dir/../.ssh/id_rsa", "a/chain/id_rsa",
		"loop1", "a/nothing", "a/abs/y", "a/b/c/self/self/f", "a/../x/y", "./a//b/./c/f", "a/b/key/..", "/a"} {
		f.Add(s)
	}
	root := treetest.Links(f)
	f.Fuzz(func(t *testing.T, p string) {
		if strings.ContainsRune(p, 0) {
			return
		}
		raw := root + "/" + p
		var d Disk
		r := d.Resolve(raw, root)
		if r.Path == "" {
			if r.Why == "" {
				t.Fatalf("%q: unknown without a reason", p)
			}
			return
		}
		if !strings.HasPrefix(r.Path, "/") || path.Clean(r.Path) != r.Path {
			t.Fatalf("%q resolved to %q: not absolute and clean", p, r.Path)
		}
		if strings.HasPrefix(r.Path, "/proc") || strings.HasPrefix(r.Path, "/dev") {
			return // judged as written
		}
		want, err := os.Stat(raw)
		if err != nil {
			return
		}
		got, err := os.Stat(r.Path)
		if err != nil || !os.SameFile(want, got) {
			t.Fatalf("%q: the kernel finds %v, the resolver says %q (%v)", p, want.Name(), r.Path, err)
		}
		if !r.Exists {
			t.Fatalf("%q: exists for the kernel, not for the resolver", p)
		}
	})
}

// TestDiskLooksOnce: a Disk lstats each path once in its lifetime, however
// many resolutions go through it, and a name a listing seeded is not
// looked up at all.
func TestDiskLooksOnce(t *testing.T) {
	root := treetest.Links(t)
	calls := map[string]int{}
	d := Disk{Lstat: func(p string) (os.FileInfo, error) {
		calls[p]++
		return os.Lstat(p)
	}}
	for range 3 {
		r := d.Resolve(root+"/a/b/key", "")
		if r.Path != root+"/home/.ssh/id_rsa" || !r.ViaLink || !r.Exists {
			t.Fatalf("a/b/key resolved to %+v", r)
		}
	}
	d.Resolve(root+"/a/b/dir/id_rsa", "") // shares a/b and home/.ssh
	for p, n := range calls {
		if n != 1 {
			t.Errorf("%s looked up %d times", p, n)
		}
	}
	d.Seed(root+"/x/seeded", 0)
	if r := d.Resolve(root+"/x/seeded", ""); !r.Exists || r.UID != -1 || calls[root+"/x/seeded"] != 0 {
		t.Fatalf("a seeded name: %+v, looked up %d times", r, calls[root+"/x/seeded"])
	}
	d.Seed(root+"/a/b/key", 0) // seen already: the lookup stands
	if e := d.Look(root + "/a/b/key"); e.Mode&fs.ModeSymlink == 0 {
		t.Fatalf("a seed overwrote a lookup: %+v", e)
	}
}

// TestDiskBudget: past its budget of lookups a Disk says why it cannot
// tell, and never guesses.
func TestDiskBudget(t *testing.T) {
	root := t.TempDir()
	var d Disk
	for i := range maxLookups {
		d.Look(root + "/" + strconv.Itoa(i))
	}
	if e := d.Look(root + "/one-more"); !errors.Is(e.Err, ErrBudget) {
		t.Fatalf("past the budget: %+v", e)
	}
	r := d.Resolve(root+"/a/b", "")
	if r.Path != "" || r.Why != ErrBudget.Error() {
		t.Fatalf("resolved past the budget: %+v", r)
	}
}

// TestResolveLoop: a loop of links is unknown with a reason, as ELOOP is
// for the kernel.
func TestResolveLoop(t *testing.T) {
	root := treetest.Links(t)
	var d Disk
	r := d.Resolve(root+"/loop1", "")
	if r.Path != "" || !strings.Contains(r.Why, "loop") {
		t.Fatalf("loop1 resolved to %+v", r)
	}
}
