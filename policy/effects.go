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
var reasonEffects = table[string]{
	{"alias", EffectCode},
	{"alias-shadows-command", EffectCode},
	{"arithmetic-value", EffectUnseen},
	{"builtin-callback", EffectCode},
	{"ci-control-file", EffectEnvironment},
	{"ci-workflow-command", EffectEnvironment},
	{"code-loading-write", EffectWrite},
	{"credentials-to-network", EffectSend},
	{"dangerous-variable", EffectEnvironment},
	{"decoded-code", EffectCode},
	{"dev-tcp", EffectNetwork},
	{"dynamic-arguments", EffectUnseen},
	{"dynamic-command", EffectUnseen},
	{"dynamic-name", EffectUnseen},
	{"dynamic-options", EffectUnseen},
	{"dynamic-payload", EffectCode},
	{"dynamic-redirect", EffectWrite},
	{"environment-to-network", EffectSend},
	{"follows-links", EffectCredentials},
	{"fork-bomb", EffectDestroy},
	{"function-shadows-command", EffectCode},
	{"gh-host", EffectSend},
	{"git-signs", EffectCredentials},
	{"glob-write", EffectWrite},
	{"go-flags", EffectEnvironment},
	{"indirect-expansion", EffectUnseen},
	{"inline-code", EffectCode},
	{"interactive-shell", EffectCode},
	{"local-program", EffectRuns},
	{"missing-payload", EffectRuns},
	{"module-path", EffectEnvironment},
	{"nameref", EffectEnvironment},
	{"network", EffectNetwork},
	{"network-code", EffectCode},
	{"not-read-only", EffectRuns},
	{"output-command", EffectCode},
	{"outside-workspace-project", EffectCode},
	{"outside-workspace-write", EffectWrite},
	{"parse-error", EffectUnseen},
	{"path-prepend", EffectEnvironment},
	{"pipe-archive-to-network", EffectSend},
	{"pipe-credentials-to-network", EffectSend},
	{"pipe-decoder-to-shell", EffectCode},
	{"pipe-environment-to-network", EffectSend},
	{"pipe-network-to-shell", EffectCode},
	{"pipe-to-shell", EffectCode},
	{"prints-environment", EffectCredentials},
	{"prints-secret", EffectCredentials},
	{"process-file", EffectCode},
	{"prompt-expansion", EffectUnseen},
	{"protected-write", EffectWrite},
	{"reads-credentials", EffectCredentials},
	{"reads-input-names", EffectCredentials},
	{"reads-otherwise", EffectUnseen},
	{"reads-private", EffectCredentials},
	{"recursive-function", EffectUnseen},
	{"repo-config-program", EffectCode},
	{"repo-config-unproven", EffectUnseen},
	{"reverse-shell", EffectCode},
	{"root-shell", EffectPrivilege},
	{"runs-download", EffectCode},
	{"script-file", EffectCode},
	{"sed-exec", EffectCode},
	{"sensitive-path-argument", EffectCredentials},
	{"set-option", EffectEnvironment},
	{"shell-rcfile", EffectCode},
	{"source-file", EffectCode},
	{"subscript-substitution", EffectUnseen},
	{"too-deep", EffectUnseen},
	{"too-many", EffectUnseen},
	{"translated-string", EffectUnseen},
	{"unchecked-position", EffectUnseen},
	{"unknown-construct", EffectUnseen},
	{"unknown-directory-write", EffectWrite},
	{"unknown-variable", EffectEnvironment},
	{"uploads-file", EffectSend},
	{"writes-file", EffectWrite},
	{"zsh-unmodelled", EffectUnseen},
}

// effectOf names the effect behind a reason.
func (a *analyzer) effectOf(r Reason) string {
	if e, ok := reasonEffects.lookup(r.Rule); ok {
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
