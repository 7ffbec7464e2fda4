package hub

import (
	"fmt"
	"strings"

	"github.com/execgate/execgate/config"
)

// managedRefusal is why the managed policy does not let session override o
// be set, or nil. The file is read afresh (it is small and rarely there):
// an administrator's change applies to the next override without
// restarting the hub. The shim holds the floor too (config.Policy.Loosened);
// refusing here tells the approver at once instead of letting them believe
// an elevation they set is in force.
func managedRefusal(o SessionOverride) error {
	m, _, err := config.LoadManaged(config.ManagedPath())
	if err != nil {
		return errBody(ErrCodeForbidden, fmt.Sprintf("%v; no session override until an administrator fixes it", err))
	}
	cfg := &config.Config{Managed: m}
	bad := cfg.ManagedFloor(o.AgentID).Loosens(config.Override{
		Security: config.Security(o.Security), Ask: config.Ask(o.Ask), AskFallback: config.Security(o.AskFallback),
	})
	if len(bad) == 0 {
		return nil
	}
	return errBody(ErrCodeForbidden, fmt.Sprintf("the managed policy %s does not let a session override loosen agent %s past its floor: %s",
		m.Path, truncate(o.AgentID), strings.Join(bad, ", ")))
}
