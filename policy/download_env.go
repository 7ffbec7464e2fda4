package policy

import "strings"

// assignedName finds the variables a command's text assigns (X=1 cmd,
// export X=1, env X=1 cmd).
var assignedName = &lazyRegexp{expr: `(?:^|[\s;&|("'])([A-Za-z_][A-Za-z0-9_]*)=`}

// downloadEnvPrefixes are the prefixes under which npm, pip and uv read
// their options from the environment (npm_config_prefix is --prefix,
// PIP_TARGET --target, UV_INDEX_URL --index-url). npm reads its own in
// any case.
var downloadEnvPrefixes = [...]string{"npm_config_", "PIP_", "UV_"}

// elsewhereVars are the variables that name another place under a name
// that is not their option's (UV_SYSTEM_PYTHON is uv's --system).
var elsewhereVars = nameSet{"UV_PROJECT_ENVIRONMENT", "UV_SYSTEM_PYTHON"}

// configuresElsewhere reports whether name, assigned by a command, sets
// one of the options that keep a download asking (elsewhereOptions,
// npmElsewhere: another place, index or registry), a registry's
// credentials (npmAuthKeys, an index's UV_INDEX_NAME_PASSWORD), or the
// configuration file the tool reads (PIP_CONFIG_FILE, UV_CONFIG_FILE):
// npm_config_location=global npm install is npm install --location global.
func configuresElsewhere(name string) bool {
	if elsewhereVars.has(name) {
		return true
	}
	for _, p := range downloadEnvPrefixes {
		if len(name) <= len(p) || !strings.EqualFold(name[:len(p)], p) {
			continue
		}
		raw := strings.ToLower(name[len(p):])
		opt := raw[:1] + strings.ReplaceAll(raw[1:], "_", "-") // npm keeps a leading _ (_authToken)
		return elsewhereOptions.has("--"+opt) || npmElsewhere.has(opt) || npmAuthKeys.has(opt) ||
			opt == "config-file" || strings.HasPrefix(opt, "index")
	}
	return false
}

// setsDownloadConfig reports whether text, a command as written, assigns
// a variable that configures a download elsewhere (configuresElsewhere).
func setsDownloadConfig(text string) bool {
	for _, m := range assignedName.get().FindAllStringSubmatch(text, -1) {
		if configuresElsewhere(m[1]) {
			return true
		}
	}
	return false
}
