package policy

// MayWrite reports whether the program may change files when it runs:
// anything not proven read-only (principle 1: safe is proven, never
// presumed), so that a step that must come before any write — a
// checkpoint of the workspace — is skipped only for what cannot write.
func (r Result) MayWrite() bool {
	return r.Risk != Safe || r.Opaque || r.ParseError != ""
}
