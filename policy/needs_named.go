package policy

// namedReads returns the path words outside the workspace that the
// sandbox may grant for reading. A grant of reads holds for every process
// the command starts, and a directory's grant for everything beneath it:
// a word that a read-only model proved harmless to name (`ls ~`) is
// harmless to grant only while no unread code runs beside it. When the
// command runs code nobody read (python3 x.py ~, ls /; ./build.sh), that
// code would read whatever the words opened — ~/.ssh, ~/.aws — unasked.
// So then no such word is granted: the kernel refuses what the code reads
// there, and the boundary hit says how to ask. The system's own files are
// readable anyway.
func (n *Needs) namedReads(words []string) []string {
	if !n.RunCode {
		return words
	}
	var out []string
	for _, w := range words {
		if systemPlace(w) {
			out = append(out, w)
		}
	}
	return out
}
