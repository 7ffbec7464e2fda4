package checkpoint

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha1"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"

	"github.com/execgate/execgate/internal/gitconfig"
	"github.com/execgate/execgate/internal/state"
)

// The first checkpoint of a git workspace would copy every file. A
// committed file whose bytes are exactly its blob in HEAD (and the index)
// needs no copy: the repository already holds that content, and git keeps
// every object a commit it can reach refers to. (A blob only staged is
// not enough: once the index moves on, nothing refers to it, and git gc
// prunes an unreferenced object that is old enough at once.) Such a file is listed with its
// blob's id (Entry.Blob) and, when an undo needs it, read back with
// `git cat-file --batch` and checked against its SHA-256 like any stored
// content. What can take it away (git gc or git prune once nothing refers
// to the blob any more, a deleted .git) makes that file's undo refuse,
// naming it; it never restores other bytes.
//
// The file is hashed as git hashes a blob ("blob <size>\0" and the bytes,
// SHA-1 or SHA-256 by the id's length): a file a clean filter or an
// end-of-line conversion changed on its way into the index does not match,
// and is copied as before.

// gitCommand runs git in the workspace root with nothing of the caller's
// environment that could point it elsewhere (GIT_DIR, GIT_INDEX_FILE …)
// and nothing of the repository's configuration that could run a program
// or reach the network for these plumbing commands: no fsmonitor, no
// pager, no hooks, no replace refs, no transport. A partial clone, which
// fetches a missing object from its remote when asked for one (git before
// 2.44 has no GIT_NO_LAZY_FETCH), is never given to git at all: see
// fetchesMissing.
func gitCommand(ctx context.Context, root string, args ...string) *exec.Cmd {
	full := append([]string{"-C", root, "--no-pager", "-c", "core.fsmonitor=false", "-c", "core.hooksPath=/dev/null",
		"-c", "protocol.allow=never", "--no-replace-objects", "--literal-pathspecs"}, args...)
	cmd := exec.CommandContext(ctx, "git", full...)
	env := make([]string, 0, len(os.Environ())+4)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "GIT_") {
			env = append(env, kv)
		}
	}
	cmd.Env = append(env, "GIT_NO_LAZY_FETCH=1", "GIT_OPTIONAL_LOCKS=0", "GIT_TERMINAL_PROMPT=0", "GIT_NO_REPLACE_OBJECTS=1")
	return cmd
}

// indexBlobs lists the regular files whose blob is the same in the index
// (stage 0) and in HEAD, with their blob ids, keeping only blobs the
// repository really holds (a partial clone may lack one).
func indexBlobs(ctx context.Context, root string) (map[string]string, error) {
	if fetchesMissing(root) {
		return nil, errPartialClone
	}
	index, err := gitCommand(ctx, root, "ls-files", "--stage", "-z").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-files: %w", err)
	}
	head, err := gitCommand(ctx, root, "ls-tree", "-r", "--full-tree", "-z", "HEAD").Output()
	if err != nil {
		return nil, fmt.Errorf("git ls-tree HEAD: %w", err)
	}
	committed := make(map[string]string)
	for rec := range bytes.SplitSeq(head, []byte{0}) {
		// "<mode> blob <oid>\t<path>"
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if f := strings.Fields(string(meta)); ok && len(f) == 3 && f[1] == "blob" {
			committed[string(path)] = f[2]
		}
	}
	blobs := make(map[string]string)
	var oids []string
	for rec := range bytes.SplitSeq(index, []byte{0}) {
		// "<mode> <oid> <stage>\t<path>"
		meta, path, ok := bytes.Cut(rec, []byte{'\t'})
		if !ok {
			continue
		}
		f := strings.Fields(string(meta))
		if len(f) != 3 || f[2] != "0" || (f[0] != "100644" && f[0] != "100755") || !validOID(f[1]) ||
			committed[string(path)] != f[1] || !validPath(string(path)) {
			continue
		}
		if _, seen := blobs[string(path)]; !seen {
			oids = append(oids, f[1])
		}
		blobs[string(path)] = f[1]
	}
	if len(blobs) == 0 {
		return blobs, nil
	}
	have, err := gitHas(ctx, root, oids)
	if err != nil {
		return nil, err
	}
	for p, oid := range blobs {
		if !have[oid] {
			delete(blobs, p)
		}
	}
	return blobs, nil
}

// errPartialClone refuses git's help in a repository that may fetch.
var errPartialClone = errors.New("the repository is a partial clone (or its configuration cannot be read): asked for a missing object, git would fetch it from a remote, which execgate does not let it do")

// fetchesMissing reports whether git, asked for an object the repository
// lacks, may fetch it from a remote — a partial clone (a promisor remote,
// extensions.partialClone), which runs the transport its configuration
// names — or whether the configuration cannot be read to tell.
func fetchesMissing(root string) bool {
	c, err := gitconfig.Load(gitconfig.Options{Dir: root, Getenv: os.Getenv})
	if err != nil {
		return true
	}
	for _, e := range c.Entries {
		switch {
		case e.Name == "extensions.partialclone", e.Name == "core.partialclonefilter",
			e.Section() == "remote" && e.Key() == "promisor" && (e.NoValue || !isFalse(e.Value)):
			return true
		}
	}
	return false
}

// isFalse reports whether git reads v as boolean false.
func isFalse(v string) bool {
	switch strings.ToLower(strings.TrimSpace(v)) {
	case "false", "no", "off", "0", "":
		return true
	}
	return false
}

// gitHas reports which of oids the repository holds as blobs.
func gitHas(ctx context.Context, root string, oids []string) (map[string]bool, error) {
	if fetchesMissing(root) {
		return nil, errPartialClone
	}
	cmd := gitCommand(ctx, root, "cat-file", "--batch-check=%(objectname) %(objecttype)")
	var in bytes.Buffer
	for _, o := range oids {
		in.WriteString(o)
		in.WriteByte('\n')
	}
	cmd.Stdin = &in
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("git cat-file --batch-check: %w", err)
	}
	have := make(map[string]bool, len(oids))
	for line := range strings.SplitSeq(string(out), "\n") {
		if oid, ok := strings.CutSuffix(line, " blob"); ok {
			have[oid] = true
		}
	}
	return have, nil
}

// validOID reports whether s is a git object id: 40 (SHA-1) or 64
// (SHA-256) lower-case hex digits.
func validOID(s string) bool {
	if len(s) != 40 && len(s) != 64 {
		return false
	}
	for i := range len(s) {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// hashAsBlob reads the regular file abs (never through a link) and returns
// its SHA-256 and its git blob id in the id's format (by oid's length).
// The blob header takes the size from fstat: a file that changes length
// while read gets an id that matches nothing.
func hashAsBlob(abs, oid string) (sum [32]byte, id string, n int64, err error) {
	f, err := state.OpenFile(abs, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return sum, "", 0, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil || !fi.Mode().IsRegular() {
		return sum, "", 0, fmt.Errorf("%s is no longer a regular file", abs)
	}
	var g hash.Hash = sha1.New()
	if len(oid) == 64 {
		g = sha256.New()
	}
	fmt.Fprintf(g, "blob %d\x00", fi.Size())
	h := sha256.New()
	n, err = io.Copy(io.MultiWriter(h, g), io.LimitReader(f, fi.Size()+1))
	if err != nil {
		return sum, "", 0, err
	}
	h.Sum(sum[:0])
	if n != fi.Size() {
		return sum, "", n, nil // changed while read: matches no blob
	}
	return sum, hex.EncodeToString(g.Sum(nil)), n, nil
}

// ErrBlobGone is returned by an undo that needs a file's content from the
// repository, which no longer holds it.
var ErrBlobGone = errors.New("its content was kept as a git object the repository no longer holds (removed by git gc or git prune, or the repository was replaced)")

// blobReader reads blobs from the workspace's repository through one
// `git cat-file --batch`, started at the first read.
type blobReader struct {
	ctx  context.Context
	root string
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
}

// open returns a reader of the blob oid's content, valid until the next
// call.
func (b *blobReader) open(oid string) (io.Reader, error) {
	if b.cmd == nil {
		if fetchesMissing(b.root) {
			return nil, errPartialClone
		}
		cmd := gitCommand(b.ctx, b.root, "cat-file", "--batch")
		in, err := cmd.StdinPipe()
		if err != nil {
			return nil, err
		}
		out, err := cmd.StdoutPipe()
		if err != nil {
			return nil, err
		}
		if err := cmd.Start(); err != nil {
			return nil, fmt.Errorf("git cat-file: %w", err)
		}
		b.cmd, b.in, b.out = cmd, in, bufio.NewReaderSize(out, 64<<10)
	}
	if _, err := io.WriteString(b.in, oid+"\n"); err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	line, err := b.out.ReadString('\n')
	if err != nil {
		return nil, fmt.Errorf("git cat-file: %w", err)
	}
	f := strings.Fields(line)
	if len(f) != 3 || f[0] != oid || f[1] != "blob" {
		return nil, ErrBlobGone
	}
	size, err := strconv.ParseInt(f[2], 10, 64)
	if err != nil || size < 0 {
		return nil, fmt.Errorf("git cat-file: bad answer %q", strings.TrimSpace(line))
	}
	return &blobBody{r: io.LimitReader(b.out, size), out: b.out}, nil
}

// blobBody is one blob's bytes; the newline git writes after them is read
// with the last of them.
type blobBody struct {
	r   io.Reader
	out *bufio.Reader
}

func (b *blobBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		if c, rerr := b.out.ReadByte(); rerr != nil || c != '\n' {
			return n, fmt.Errorf("git cat-file: no newline after the content")
		}
	}
	return n, err
}

func (b *blobReader) Close() {
	if b.cmd == nil {
		return
	}
	b.in.Close()
	io.Copy(io.Discard, b.out)
	b.cmd.Wait()
}
