package sandbox

// MinABI is the Landlock ABI a confinement needs: file system rules with
// truncation and device ioctls (ABI 5), TCP rules (ABI 4), and the scopes
// that keep signals and abstract Unix sockets inside (ABI 6).
const MinABI = 6

// Status is what this machine can confine.
type Status struct {
	// ABI is the Landlock ABI the kernel reports, 0 when it has none.
	ABI int `json:"abi"`
	// Reason says why commands cannot be confined here; "" when they can.
	Reason string `json:"reason,omitempty"`
}

// Supported reports whether commands can be confined.
func (s Status) Supported() bool { return s.Reason == "" }

// OffEnv names the environment variable that turns confinement off
// ("off"): commands that would run confined then ask, as on a machine
// without Landlock. It can only take rights away, so an agent setting it
// gains nothing.
const OffEnv = "EXECGATE_SANDBOX"

// Probe tells whether this machine can confine commands, and why not. It
// costs a system call or two; getenv may be nil.
func Probe(getenv func(string) string) Status {
	if getenv != nil && getenv(OffEnv) == "off" {
		return Status{Reason: OffEnv + "=off turns confinement off"}
	}
	return probe()
}
