package policy

import (
	"errors"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// Python's package managers read index URLs, and the credentials in them,
// from configuration files as well as from the environment
// (RegistryCredentials): pip from PIP_CONFIG_FILE, the system's files,
// the user's and the virtual environment's pip.conf
// (https://pip.pypa.io/en/stable/topics/configuration/); uv from
// uv.toml and pyproject.toml in the project, the user's and system's
// uv.toml, and UV_CONFIG_FILE's or --config-file's
// (https://docs.astral.sh/uv/concepts/configuration-files/).
// What a download installs could read such a password and publish, or
// upload it: the download asks, as with a token in its environment.

// pythonIndexFiles lists the configuration files a Python download run by
// argv in dir may take an index's credentials from; home and the
// environment getenv say where the user's and the environment's are.
func pythonIndexFiles(argv []string, dir, home string, getenv func(string) string) []string {
	var files []string
	add := func(ps ...string) {
		for _, p := range ps {
			if p != "" && filepath.IsAbs(p) {
				files = append(files, p)
			}
		}
	}
	named := []string{getenv("PIP_CONFIG_FILE"), getenv("UV_CONFIG_FILE")}
	for i, a := range argv {
		if v, ok := strings.CutPrefix(a, "--config-file="); ok {
			named = append(named, v) // uv's
		} else if a == "--config-file" && i+1 < len(argv) {
			named = append(named, argv[i+1])
		}
	}
	for _, v := range named {
		if v != "" && v != os.DevNull {
			if !filepath.IsAbs(v) {
				v = filepath.Join(dir, v)
			}
			add(v)
		}
	}
	add("/etc/pip.conf", "/etc/xdg/pip/pip.conf", "/etc/uv/uv.toml", "/etc/xdg/uv/uv.toml")
	for _, d := range filepath.SplitList(getenv("XDG_CONFIG_DIRS")) {
		add(filepath.Join(d, "pip", "pip.conf"), filepath.Join(d, "uv", "uv.toml"))
	}
	config := getenv("XDG_CONFIG_HOME")
	if config == "" && home != "" {
		config = filepath.Join(home, ".config")
	}
	if config != "" {
		add(filepath.Join(config, "pip", "pip.conf"), filepath.Join(config, "uv", "uv.toml"))
	}
	if home != "" {
		add(filepath.Join(home, ".pip", "pip.conf"))
	}
	// The virtual environment's own: the one activated, the one the
	// program lives in (.venv/bin/pip), those of the directory.
	add(filepath.Join(getenv("VIRTUAL_ENV"), "pip.conf"))
	if len(argv) > 0 && strings.Contains(argv[0], "/") {
		prog := argv[0]
		if !filepath.IsAbs(prog) {
			prog = filepath.Join(dir, prog)
		}
		add(filepath.Join(filepath.Dir(filepath.Dir(prog)), "pip.conf"))
	}
	for _, venv := range []string{".venv", "venv", "env"} {
		add(filepath.Join(dir, venv, "pip.conf"))
	}
	// The project's, in the directory and each one above it.
	for d := dir; d != ""; d = parentDir(d) {
		if d != home {
			add(filepath.Join(d, "uv.toml"), filepath.Join(d, "pyproject.toml"))
		}
	}
	return files
}

// clientCertKeys are the settings of pip.conf (with or without leading
// dashes) whose value is a client certificate: a credential with no URL.
var clientCertKeys = nameSet{"client-cert", "client_cert"}

// indexFileAuthenticates reports whether the configuration file at p
// holds a URL with a user in it on any line, whatever the setting (an
// index's url in a TOML inline table or an array over lines, a git
// source with a token, a pip.conf value continued over lines), or a
// client certificate; or exists but cannot be read whole, which counts as
// one.
func indexFileAuthenticates(p string) bool {
	return configLines(p, func(line string) bool {
		if carriesUserinfo(line) {
			return true
		}
		k, _, ok := strings.Cut(line, "=")
		return ok && clientCertKeys.has(strings.ToLower(strings.Trim(strings.TrimSpace(k), `"'-`)))
	})
}

// configLines reports whether found holds for a line of the file at p,
// or the file exists but cannot be read whole (it may hold anything):
// larger than a project file may be, or no regular file (a FIFO put in
// its place fails the read at once, instead of holding it: readProjectFile).
func configLines(p string, found func(line string) bool) bool {
	b, err := readProjectFile(p)
	if err != nil {
		return !os.IsNotExist(err) && !errors.Is(err, syscall.ENOTDIR)
	}
	for line := range strings.Lines(string(b)) {
		if found(strings.TrimRight(line, "\r\n")) {
			return true
		}
	}
	return false
}

// pythonDownload reports whether argv is a Python package manager's
// download (pip's, uv's, tox's), whose configuration files may hold an
// index's credentials.
func pythonDownload(argv []string) bool {
	_, key, _, ok := fetchOf(argv)
	if !ok {
		return false
	}
	prog, _, _ := strings.Cut(key, " ")
	return strings.HasPrefix(prog, "pip") || prog == "uv" || prog == "tox" || path.Base(prog) == "pip"
}
