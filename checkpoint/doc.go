// Package checkpoint records a workspace before a command that may change
// it, and puts it back: `execgate undo`.
//
// A checkpoint is a listing of the workspace — every file, directory and
// symbolic link that is not ignored, with its exact permission bits, its
// content (by SHA-256) and its link target — plus the content of every
// file that changed since the previous checkpoint, copied into a private
// content store. The first checkpoint of a workspace copies all of it;
// later ones compare each entry's size, times and inode with the last
// listing (as git's index does) and copy only what changed, so a command
// in a large workspace pays one directory walk and the copies of the
// files that really changed.
//
// Nothing is written into the workspace or into its repository: a git
// workspace's index, HEAD, refs, stash, reflog and objects are never
// touched, so no git command (git gc included) can lose a checkpoint. (A
// git tree in the repository's object store was the other choice: it
// cannot hold exact permission bits or empty directories, and git add
// runs the repository's clean filters and end-of-line conversion, so a
// restore would not be byte for byte.) Git's ignore rules (.gitignore
// files, .git/info/exclude and the global excludes file at its default
// place; core.excludesFile is not read) decide what is left out, as git
// decides what it does not track; outside git, directories that only hold what a tool downloads or
// builds (node_modules, .venv, __pycache__, …) are left out. Each
// checkpoint says what it left out, and which files it could not keep
// (too large, unreadable, past the copy budget).
//
// Checkpoints of one workspace form a chain: the newest listing is kept
// whole, and each older state is kept as the changes that lead from it to
// the next one: what the command of that checkpoint changed (with what
// happened until the next checkpoint). Undoing a command puts those paths
// back after checking that the workspace still holds what the command left
// there, so that undoing an older command keeps later work on other paths
// (a merge), and refuses, changing nothing, when later work touched the
// same ones.
//
// Restoring writes only inside the workspace, through an os.Root: a
// symbolic link in the workspace, wherever it points, is recorded and
// restored as a link and never written through.
//
// Everything lives under the state directory's checkpoints/ (see
// internal/state), in directories of mode 0700 and files of mode 0600,
// pruned by count, age and size.
package checkpoint
