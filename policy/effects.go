package policy

import "strings"

// Effects are what a segment does, in the few kinds a person weighs: the
// four layers' reasons are the explanation, and each reason names the
// effect behind it. Coverage by a wildcard pattern is decided per reason
// (Reason.Coverable); the effect says why.
const (
	EffectRuns        = "runs"             // runs a program that is not read-only
	EffectWrite       = "write"            // creates, changes or deletes files
	EffectCredentials = "read-credentials" // reads secrets
	EffectNetwork     = "network"          // talks to other hosts
	EffectSend        = "send"             // sends local data or secrets to the network
	EffectEnvironment = "environment"      // changes what later programs load or run
	EffectCode        = "code"             // runs code the analysis does not see whole
	EffectPrivilege   = "privilege"        // gains rights over the host or other users
	EffectUnseen      = "unseen"           // a position or value the analysis cannot read
	EffectDestroy     = "destroy"          // irreversible harm: deletes, wipes, stops systems
)

// reasonEffects maps the analyzer's own rule ids to their effect; the rule
// table's entries carry theirs (rule.Effect) or, without one, are "runs"
// or, when dangerous, "destroy".
var reasonEffects = map[string]string{
	"not-read-only": EffectRuns, "local-program": EffectRuns, "missing-payload": EffectRuns,
	"writes-file": EffectWrite, "protected-write": EffectWrite, "outside-workspace-write": EffectWrite,
	"code-loading-write": EffectWrite, "unknown-directory-write": EffectWrite, "glob-write": EffectWrite,
	"dynamic-redirect":        EffectWrite,
	"sensitive-path-argument": EffectCredentials,
	"reads-credentials":       EffectCredentials, "reads-input-names": EffectCredentials, "prints-environment": EffectCredentials, "prints-secret": EffectCredentials,
	"network": EffectNetwork, "dev-tcp": EffectNetwork,
	"credentials-to-network": EffectSend, "pipe-credentials-to-network": EffectSend,
	"pipe-environment-to-network": EffectSend, "pipe-archive-to-network": EffectSend, "environment-to-network": EffectSend, "uploads-file": EffectSend,
	"dangerous-variable": EffectEnvironment, "unknown-variable": EffectEnvironment, "path-prepend": EffectEnvironment,
	"nameref":     EffectEnvironment,
	"set-option":  EffectEnvironment,
	"inline-code": EffectCode, "dynamic-payload": EffectCode, "script-file": EffectCode, "source-file": EffectCode,
	"network-code": EffectCode, "decoded-code": EffectCode, "pipe-network-to-shell": EffectCode,
	"pipe-decoder-to-shell": EffectCode, "runs-download": EffectCode, "pipe-to-shell": EffectCode, "interactive-shell": EffectCode,
	"shell-rcfile": EffectCode, "output-command": EffectCode, "sed-exec": EffectCode, "builtin-callback": EffectCode,
	"alias": EffectCode, "alias-shadows-command": EffectCode, "function-shadows-command": EffectCode,
	"reverse-shell": EffectCode, "outside-workspace-project": EffectCode,
	"root-shell":       EffectPrivilege,
	"arithmetic-value": EffectUnseen, "unchecked-position": EffectUnseen, "unknown-construct": EffectUnseen, "zsh-unmodelled": EffectUnseen,
	"dynamic-name": EffectUnseen, "dynamic-command": EffectUnseen, "dynamic-arguments": EffectUnseen,
	"dynamic-options": EffectUnseen, "indirect-expansion": EffectUnseen, "translated-string": EffectUnseen,
	"prompt-expansion": EffectUnseen, "parse-error": EffectUnseen, "too-deep": EffectUnseen, "too-many": EffectUnseen,
	"recursive-function": EffectUnseen, "subscript-substitution": EffectUnseen,
	"fork-bomb": EffectDestroy,
}

// effectOf names the effect behind a reason.
func (a *analyzer) effectOf(r Reason) string {
	if e, ok := reasonEffects[r.Rule]; ok {
		return e
	}
	if ru := a.r.ruleByID(r.Rule); ru != nil && ru.Effect != "" {
		if ru.Effect == "credentials" {
			return EffectCredentials
		}
		return ru.Effect
	}
	if strings.HasPrefix(r.Rule, "wrapper-") && r.Risk == Dangerous {
		return EffectPrivilege // sudo, doas, su
	}
	if r.Risk == Dangerous {
		return EffectDestroy
	}
	return EffectRuns
}

// Effects lists the distinct effects of the segment's reasons, in the
// order they were found.
func (s *Segment) Effects() []string {
	var out []string
	for _, r := range s.Reasons {
		if r.Effect != "" && !contains(out, r.Effect) {
			out = append(out, r.Effect)
		}
	}
	return out
}
