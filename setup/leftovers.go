package setup

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"
)

// Leftover is a line that still names execgate's binary or shims in a file
// where people (or the recipes setup shows) put them by hand: Undo cannot
// take it out, since setup's records do not cover it, and once execgate is
// removed whatever reads the line fails (npm scripts with ENOENT, an agent
// whose hook is gone, a service that cannot start).
type Leftover struct {
	// File is where the line is.
	File string
	// Line is the line's number, from 1.
	Line int
	// Text is the line, shortened and with control characters replaced,
	// for showing.
	Text string
	// Fix says what to do about it.
	Fix string
}

// maxLeftoverText bounds the part of a line a Leftover shows.
const maxLeftoverText = 160

// candidate is a file that may name execgate, and how to fix a line in it.
type candidate struct {
	path string
	fix  func(file, line string) string
}

// Leftovers looks for lines that name o.Exe or the shim directory in the
// files where execgate is commonly wired in by hand: the agents' settings
// files, npm's, pnpm's and yarn's configuration (script-shell), shell
// start-up files, and the hub's service units. It reads at most
// maxSettingsBytes of each and skips files that are missing or not
// regular; a file it cannot read is a Leftover, since it might name
// execgate. Run after UndoAll, anything it finds is what still points at
// execgate.
func Leftovers(o Options) ([]Leftover, error) {
	probe := o
	probe.Agent, probe.Hook, probe.Settings = agentTable()[0].name, false, ""
	j, err := probe.job()
	if err != nil {
		return nil, err
	}
	needles := j.needles()
	var found []Leftover
	seen := map[string]bool{}
	for _, c := range leftoverCandidates(j.o.Home, j.o.Getenv) {
		if seen[c.path] {
			continue
		}
		seen[c.path] = true
		found = append(found, scanLeftovers(c, needles)...)
	}
	return found, nil
}

// needles are the ways a file may name the binary or the shim directory:
// as absolute paths, and under the home directory also as ~/… and $HOME/….
func (j *job) needles() []string {
	var out []string
	for _, p := range []string{j.paths.exe, j.paths.shims} {
		out = append(out, p)
		home := filepath.Clean(j.o.Home)
		if j.o.Home == "" || home == "/" || !strings.HasPrefix(p, home+string(filepath.Separator)) {
			continue
		}
		rest := p[len(home):]
		out = append(out, "~"+rest, "$HOME"+rest, "${HOME}"+rest)
	}
	return out
}

// scanLeftovers returns the lines of c's file that contain a needle.
func scanLeftovers(c candidate, needles []string) []Leftover {
	raw, exists, _, err := readFile(c.path, maxSettingsBytes)
	var de *docError
	switch {
	case errors.As(err, &de), err == nil && !exists:
		return nil // not a regular file, or none: nothing reads it as settings
	case err != nil:
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			return nil // a parent is not a directory: no such file either
		}
		return []Leftover{{File: c.path, Fix: fmt.Sprintf("could not read it (%v): check it by hand for execgate's paths", err)}}
	}
	var found []Leftover
	for i, line := range bytes.Split(raw, []byte("\n")) {
		s := string(line)
		for _, n := range needles {
			if strings.Contains(s, n) {
				found = append(found, Leftover{File: c.path, Line: i + 1, Text: showLine(s), Fix: c.fix(c.path, s)})
				break
			}
		}
	}
	return found
}

// showLine makes a line safe and short enough to print on a terminal.
func showLine(s string) string {
	s = strings.TrimSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && r != '\t' {
			return '?'
		}
		return r
	}, s))
	if r := []rune(s); len(r) > maxLeftoverText {
		s = string(r[:maxLeftoverText]) + "…"
	}
	return s
}

// leftoverCandidates are the files Leftovers reads, each with its fix.
func leftoverCandidates(home string, getenv func(string) string) []candidate {
	if home == "" {
		return nil
	}
	config := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(config) {
		config = filepath.Join(home, ".config")
	}
	var list []candidate
	for _, a := range agentTable() {
		if a.settings == nil {
			continue
		}
		name := a.name
		list = append(list, candidate{a.settings(home, getenv), func(file, _ string) string {
			return fmt.Sprintf("take execgate's entry out of %s by hand (setup did not add it, or it was changed since; execgate setup %s shows what it looks like)", file, name)
		}})
	}
	npmrc := getenv("NPM_CONFIG_USERCONFIG")
	if npmrc == "" {
		npmrc = getenv("npm_config_userconfig")
	}
	if !filepath.IsAbs(npmrc) {
		npmrc = filepath.Join(home, ".npmrc")
	}
	list = append(list,
		candidate{npmrc, scriptShellFix("npm")},
		candidate{filepath.Join(config, "pnpm", "rc"), scriptShellFix("pnpm")},
		candidate{filepath.Join(home, "Library", "Preferences", "pnpm", "rc"), scriptShellFix("pnpm")},
		candidate{filepath.Join(home, ".yarnrc"), scriptShellFix("yarn")},
		candidate{filepath.Join(config, "systemd", "user", "execgate-hub.service"), func(file, _ string) string {
			return fmt.Sprintf("run systemctl --user disable --now execgate-hub, then remove %s", file)
		}},
		candidate{filepath.Join(home, "Library", "LaunchAgents", "com.github.execgate.hub.plist"), func(file, _ string) string {
			return fmt.Sprintf("run launchctl bootout gui/$(id -u) %s, then remove it", file)
		}},
	)
	for _, rc := range []string{".bashrc", ".bash_profile", ".bash_login", ".profile", ".zshenv", ".zprofile", ".zshrc",
		filepath.Join(".config", "fish", "config.fish")} {
		list = append(list, candidate{filepath.Join(home, rc), editLineFix})
	}
	return list
}

// scriptShellFix is the fix for a package manager's configuration: the
// undo of the recipe `execgate setup shell` shows.
func scriptShellFix(tool string) func(file, line string) string {
	return func(file, line string) string {
		if strings.HasPrefix(strings.TrimSpace(line), "script-shell") {
			return fmt.Sprintf("run %s config delete script-shell", tool)
		}
		return editLineFix(file, line)
	}
}

// editLineFix is the fix for a line only its author knows the purpose of.
func editLineFix(file, _ string) string {
	return fmt.Sprintf("edit %s: remove or change the line", file)
}
