// Package setup integrates execgate with coding agents: what each agent needs in its
// settings, and applying or undoing it safely.
//
// Each agent is a row of a table: where its settings file is, the entries
// execgate needs in it (an environment variable naming the shim, or a hook that
// runs `execgate hook AGENT` before every shell command) and the shell recipes
// for the tools that have no settings file. [Show] prints them; [Apply] merges
// them into the settings file, editing the JSON in place so that everything
// else in it keeps its bytes, order, comments and formatting; [Undo] takes
// them out again: it restores the file exactly when nobody has touched it since,
// and otherwise removes only execgate's own entries.
package setup
