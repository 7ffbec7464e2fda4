package gitconfig

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPrograms pins which configured programs count for which command,
// from git's documentation (git-config(1), githooks(5), gitcredentials(7),
// git-help(1)); the execution tests in package policy prove the same
// against the real git.
func TestPrograms(t *testing.T) {
	tests := []struct {
		config string
		cmd    string
		want   string // the finding's name, "" for none
	}{
		{"[core]\npager = evil", "log", "core.pager"},
		{"[core]\npager = evil", "status", ""},
		{"[core]\npager = evil\n[pager]\nstatus", "status", "core.pager"},
		{"[pager]\nstatus = evil", "status", "pager.status"},
		{"[pager]\nlog = false", "status", ""},
		{"[core]\nfsmonitor = true", "status", ""},
		{"[core]\nfsmonitor = ./hook", "ls-files", "core.fsmonitor"},
		{"[gpg]\nprogram = evil", "log", ""},
		{"[gpg]\nprogram = evil", "log --show-signature", "gpg.program"},
		{"[gpg]\nprogram = evil", "log --format=%G?", "gpg.program"},
		{"[gpg]\nprogram = evil\n[log]\nshowSignature", "log", "gpg.program"},
		{"[gpg]\nprogram = evil\n[pretty]\nsig = %h %G?", "log --pretty=sig", "gpg.program"},
		{"[gpg \"ssh\"]\nprogram = evil", "verify-commit HEAD", "gpg.ssh.program"},
		{"[alias]\nst = !evil", "st", "alias.st"},
		{"[alias]\nST = !evil", "st", "alias.st"},
		{"[alias]\nstatus = !evil", "status", ""},
		{"[credential]\nhelper = store", "fetch", ""},
		{"[credential]\nhelper = !evil", "fetch", "credential.helper"},
		{"[credential]\nhelper = !evil", "status", ""},
		{"[credential]\nhelper = manager", "push", "credential.helper"},
		{"[credential \"https://a.example\"]\nhelper = !evil\n[remote \"origin\"]\nurl = https://b.example/r", "fetch", ""},
		{"[credential \"https://a.example\"]\nhelper = !evil\n[remote \"origin\"]\nurl = https://a.example/r", "fetch", "credential.https://a.example.helper"},
		{"[credential \"https://a.example\"]\nhelper = !evil", "clone https://a.example/r", "credential.https://a.example.helper"},
		{"[credential \"https://a.example\"]\nhelper = !evil\n[url \"https://a.example/\"]\ninsteadOf = a:", "clone a:r", "credential.https://a.example.helper"},
		{"[man]\nviewer = evil", "help", ""},
		{"[man]\nviewer = evil", "help log", "man.viewer"},
		{"[man]\nviewer = man", "log --help", ""},
		{"[man \"man\"]\npath = /x", "log --help", "man.man.path"},
		{"[help]\nformat = web", "help -a", ""},
		{"[help]\nformat = web", "help log", "help.format"},
		{"[core]\neditor = evil", "commit -m x", ""},
		{"[core]\neditor = evil", "commit", "core.editor"},
		{"[core]\neditor = evil", "commit -m x -e", "core.editor"},
		{"[core]\neditor = evil", "tag -l", ""},
		{"[core]\neditor = evil", "tag -a v1", "core.editor"},
		{"[protocol \"ext\"]\nallow = always", "fetch", "protocol.ext.allow"},
		{"[protocol \"ext\"]\nallow = never", "fetch", ""},
		{"[protocol]\nallow = user", "fetch", "protocol.allow"},
		{"[remote \"o\"]\nurl = foo::bar", "fetch o", "remote.o.url"},
		{"[remote \"o\"]\nurl = https://x/y", "fetch o", ""},
		{"[url \"ext::sh -c x\"]\ninsteadOf = https://", "fetch", "url.ext::sh -c x.insteadof"},
		{"[submodule \"s\"]\nupdate = !evil", "submodule update", "submodule.s.update"},
		{"[submodule \"s\"]\nupdate = rebase", "submodule update", ""},
		{"[trailer \"s\"]\ncommand = evil", "commit -m x", "trailer.s.command"},
		{"[diff]\nexternal = evil", "diff", "diff.external"},
		{"[diff]\nexternal = evil", "status", ""},
		{"[core]\nsshCommand = evil", "status", ""},
		{"[core]\nsshCommand = evil", "ls-remote", "core.sshcommand"},
		{"[merge]\ntool = x", "mergetool", "merge.tool"},
		{"", "difftool", "git difftool"},
		{"[init]\ntemplateDir = /t", "clone https://x/y", "init.templatedir"},
		{"[core]\npager = evil", "--version", ""},
	}
	for _, tc := range tests {
		es, err := Parse([]byte(tc.config), "c")
		require.NoError(t, err, tc.config)
		c := &Config{Entries: es, env: func(string) string { return "" }}
		words := strings.Fields(tc.cmd)
		inv := Invocation{Sub: words[0], Args: words[1:]}
		if strings.HasPrefix(words[0], "-") {
			inv = Invocation{}
		}
		found, err := c.Programs(inv)
		require.NoError(t, err)
		var names []string
		for _, f := range found {
			names = append(names, f.Name)
		}
		if tc.want == "" {
			assert.Empty(t, names, "%q / git %s", tc.config, tc.cmd)
		} else {
			assert.Contains(t, names, tc.want, "%q / git %s", tc.config, tc.cmd)
		}
	}
}

// TestSetsProgram: the keys whose setting makes later git commands run a
// program, in any spelling.
func TestSetsProgram(t *testing.T) {
	for k, want := range map[string]bool{
		"core.pager=x": true, "Core.FsMonitor=x": true, "core.fsmonitor=true": false, "remote.origin.uploadpack=x": true,
		"submodule.x.update=!x": true, "submodule.x.update=rebase": false, "alias.co=checkout": false, "alias.x=!x": true,
		"alias.lg=-c core.pager=x log": true, "include.path=x": true, "includeIf.gitdir:/x.path=y": true,
		"user.name=me": false, "core.autocrlf=true": false, "url.ext::x.insteadOf=https://": true,
		"protocol.ext.allow=always": true, "protocol.file.allow=always": false, "credential.helper=store": true,
		"core.hooksPath=x": true, "core.worktree=/x": true, "bad key=x": true, "diff.x.textconv=cat": true,
	} {
		name, value, _ := strings.Cut(k, "=")
		assert.Equal(t, want, SetsProgram(name, value, false), k)
	}
}
