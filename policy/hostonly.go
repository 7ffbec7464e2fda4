package policy

import (
	"fmt"
	"strings"
)

// unitStateProperties are the properties of a systemd unit whose values
// say what state it is in, what it is and where it comes from: `systemctl
// show -p NAME` prints these and nothing else. Every other property may
// hold a secret (Environment=, SetCredential=, an ExecStart= command line
// with a password in it), so a property not listed here asks. Sorted.
// https://www.freedesktop.org/software/systemd/man/latest/org.freedesktop.systemd1.html
var unitStateProperties = nameSet{
	"ActiveEnterTimestamp", "ActiveExitTimestamp", "ActiveState", "After", "Before",
	"CPUUsageNSec", "CanReload", "CanRestart", "CanStart", "CanStop", "Conflicts",
	"ControlGroup", "ControlPID", "Description", "DropInPaths", "ExecMainCode",
	"ExecMainExitTimestamp", "ExecMainPID", "ExecMainStartTimestamp", "ExecMainStatus",
	"FragmentPath", "Id", "InactiveEnterTimestamp", "InactiveExitTimestamp", "LoadState",
	"MainPID", "MemoryCurrent", "MemoryPeak", "NRestarts", "Names", "NeedDaemonReload",
	"PartOf", "Requires", "Restart", "RestartUSec", "Result", "StateChangeTimestamp",
	"SubState", "SystemState", "TasksCurrent", "TimeoutStartUSec", "TimeoutStopUSec",
	"TriggeredBy", "Triggers", "Type", "UnitFilePreset", "UnitFileState", "Version",
	"WantedBy", "Wants",
}

// systemctlShowUnsafe says why `systemctl show` may print a secret: without
// -p it prints every property, the unit's Environment= among them; with
// -p, a property not known to hold only state.
func systemctlShowUnsafe(v argView) string {
	specs := []string{"-p", "--property", "-P"}
	named := false
	for _, i := range v.options {
		spec := matchingSpec(specs, v.words[i].text)
		if spec == "" {
			continue
		}
		val, ok := optionSpecValue(v.words, i, spec)
		if !ok || !val.known {
			return "may print a property known only at run time, such as the unit's Environment=, which often holds passwords"
		}
		for _, name := range strings.Split(val.text, ",") {
			if !unitStateProperties.has(name) {
				return fmt.Sprintf("-p %s may print the unit's environment or command lines, which often hold passwords (name state properties such as ActiveState)", name)
			}
		}
		named = true
	}
	if !named {
		return "prints every property, the unit's Environment= among them, which often holds passwords (give -p ActiveState,SubState)"
	}
	return ""
}
