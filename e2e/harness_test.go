package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gofrs/flock"

	"github.com/execgate/execgate/policy"
	"github.com/execgate/execgate/shim"
)

// TestMain keeps a CI job's own variables (CI=true) from the agents and
// shims these tests start: they stand for a person's machine, where a
// printed line is no workflow command.
func TestMain(m *testing.M) {
	for _, v := range policy.CIVariables() {
		os.Unsetenv(v)
	}
	os.Exit(m.Run())
}

// enabled skips the test unless EXECGATE_E2E=1: `go test ./...` stays fast
// and needs no npm.
func enabled(t *testing.T) {
	t.Helper()
	if os.Getenv("EXECGATE_E2E") != "1" {
		t.Skip("end-to-end tests with the real agent CLIs are off: EXECGATE_E2E=1 go test ./e2e runs them")
	}
}

// pin is one agent CLI as agents.json pins it.
type pin struct {
	Name    string `json:"name"`
	Package string `json:"package"`
	Version string `json:"version"`
	Bin     string `json:"bin"`
}

func readPins(t testing.TB) map[string]pin {
	t.Helper()
	raw, err := os.ReadFile("agents.json")
	if err != nil {
		t.Fatalf("read the pinned versions: %v", err)
	}
	var f struct {
		Agents []pin `json:"agents"`
	}
	if err := json.Unmarshal(raw, &f); err != nil {
		t.Fatalf("agents.json: %v", err)
	}
	out := map[string]pin{}
	for _, p := range f.Agents {
		out[p.Name] = p
	}
	return out
}

// cacheRoot is where the CLIs are installed once:
// $XDG_CACHE_HOME/execgate-e2e (or the platform's cache directory).
func cacheRoot(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("XDG_CACHE_HOME")
	if !filepath.IsAbs(dir) {
		d, err := os.UserCacheDir()
		if err != nil {
			t.Skipf("no cache directory to install the agent CLIs in: %v", err)
		}
		dir = d
	}
	return filepath.Join(dir, "execgate-e2e")
}

// installTimeout bounds one npm install; a slow registry skips the agent.
const installTimeout = 5 * time.Minute

// install returns the path of p's executable, installing the pinned version
// with npm the first time. No npm, or an install that fails (offline),
// skips the test with one line saying so.
func install(t testing.TB, p pin) string {
	t.Helper()
	dir := filepath.Join(cacheRoot(t), strings.ReplaceAll(p.Package, "/", "_")+"@"+p.Version)
	bin := filepath.Join(dir, "node_modules", ".bin", p.Bin)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Skipf("%s: cannot make the install directory: %v", p.Name, err)
	}
	// One install at a time per package, also across test processes.
	lock := flock.New(dir + ".lock")
	if err := lock.Lock(); err != nil {
		t.Skipf("%s: cannot lock %s: %v", p.Name, dir, err)
	}
	defer lock.Unlock()
	if _, err := os.Stat(bin); err != nil {
		npm, err := exec.LookPath("npm")
		if err != nil {
			t.Skipf("%s: npm is not installed, so %s@%s cannot be (install Node.js and npm to run this test)", p.Name, p.Package, p.Version)
		}
		ctx, cancel := context.WithTimeout(context.Background(), installTimeout)
		defer cancel()
		cmd := exec.CommandContext(ctx, npm, "install", "--prefix", dir, "--no-audit", "--no-fund", "--no-save",
			"--loglevel=error", p.Package+"@"+p.Version)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Skipf("%s: npm install %s@%s failed (offline?): %v: %s", p.Name, p.Package, p.Version, err, lastLine(out))
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skipf("%s: npm installed %s@%s but %s is missing", p.Name, p.Package, p.Version, bin)
	}
	// The npm packages bring native binaries as optional dependencies
	// (Codex's and Claude Code's): one missing for this platform shows
	// here, not as a mysterious scenario failure.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// In a home of its own: Gemini CLI writes its projects.json (and
	// leaves temporary files beside it) even for --version, and the
	// machine's real home is not the test's to change.
	probe := exec.CommandContext(ctx, bin, "--version")
	probe.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_CONFIG_HOME=", "XDG_DATA_HOME=", "XDG_STATE_HOME=", "XDG_CACHE_HOME=")
	if out, err := probe.CombinedOutput(); err != nil {
		t.Skipf("%s: %s@%s is installed but does not run here (its native binary for %s/%s?): %v: %s",
			p.Name, p.Package, p.Version, runtime.GOOS, runtime.GOARCH, err, lastLine(out))
	}
	return bin
}

// lastLine is the line of npm's output that says what went wrong.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	for _, l := range lines {
		if strings.HasPrefix(l, "npm error") && !strings.Contains(l, "complete log") && strings.TrimSpace(strings.TrimPrefix(l, "npm error")) != "" {
			return l
		}
	}
	return lines[len(lines)-1]
}

// build compiles execgate once per test binary, as install.sh does.
var build struct {
	once sync.Once
	path string
	err  error
}

func execgateBinary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		dir, err := os.MkdirTemp("", "execgate-e2e-bin-")
		if err != nil {
			build.err = err
			return
		}
		build.path = filepath.Join(dir, "execgate")
		// Both binaries, as install.sh builds them: the shims link to
		// execgate-shell, which sits beside execgate.
		for out, pkg := range map[string]string{build.path: "../cmd/execgate", filepath.Join(dir, "execgate-shell"): "../cmd/execgate-shell"} {
			cmd := exec.Command("go", "build", "-trimpath", "-o", out, pkg)
			cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
			if msg, err := cmd.CombinedOutput(); err != nil {
				build.err = fmt.Errorf("go build %s: %v: %s", pkg, err, msg)
				return
			}
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// homesRoot is where the private home directories are made: beside this
// package, not in /tmp, since execgate (rightly) judges deletions under a
// temporary directory more leniently than under a home.
func homesRoot(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("EXECGATE_E2E_HOMES")
	if dir == "" {
		wd, err := os.Getwd()
		if err != nil {
			t.Fatal(err)
		}
		dir = filepath.Join(wd, ".homes")
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	return dir
}

// world is one private installation: a home directory with execgate
// installed under ~/.local as install.sh puts it, its configuration, a git
// workspace ~/work and the ~/precious directory that must survive.
type world struct {
	t       *testing.T
	home    string
	work    string
	exe     string // ~/.local/bin/execgate
	shims   string // ~/.local/lib/execgate/shims
	argvDir string // where the recording shims write each argv
	runtime string // XDG_RUNTIME_DIR, short for the hub's socket
	env     []string
}

// defaultConfig asks on anything not allowed (a person or the hub's
// approvers decide), with nobody there meaning deny.
const defaultConfig = `{"version": 1, "defaults": {"security": "allowlist", "ask": "on-miss", "askFallback": "deny", "timeoutMs": 60000}}`

func newWorld(t *testing.T) *world {
	t.Helper()
	home, err := os.MkdirTemp(homesRoot(t), "h")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(home) })
	rt, err := os.MkdirTemp("", "eg")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(rt) })
	w := &world{t: t, home: home, work: filepath.Join(home, "work"), runtime: rt,
		exe:     filepath.Join(home, ".local", "bin", "execgate"),
		shims:   filepath.Join(home, ".local", "lib", "execgate", "shims"),
		argvDir: filepath.Join(home, ".e2e-argv")}
	for _, d := range []string{filepath.Dir(w.exe), w.shims, w.argvDir, w.work,
		filepath.Join(home, "precious"), filepath.Join(home, ".config", "execgate")} {
		must(t, os.MkdirAll(d, 0o755))
	}
	must(t, os.WriteFile(filepath.Join(home, "precious", "keep.txt"), []byte("keep me\n"), 0o644))
	must(t, os.WriteFile(w.configPath(), []byte(defaultConfig), 0o600))
	must(t, copyFile(execgateBinary(t), w.exe, 0o755))
	shellExe := filepath.Join(filepath.Dir(w.exe), "execgate-shell")
	must(t, copyFile(filepath.Join(filepath.Dir(execgateBinary(t)), "execgate-shell"), shellExe, 0o755))
	for _, name := range []string{"bash", "sh", "zsh"} {
		must(t, os.Symlink(shellExe, filepath.Join(w.shims, name))) // as install.sh links them
	}
	w.env = []string{
		"HOME=" + home, "USER=" + currentUser(), "LOGNAME=" + currentUser(), "LANG=C.UTF-8", "TERM=dumb",
		"PATH=" + filepath.Dir(w.exe) + ":" + nodePath() + "/usr/local/bin:/usr/bin:/bin",
		"SHELL=/bin/bash", "XDG_RUNTIME_DIR=" + rt, "TMPDIR=" + os.TempDir(),
		"NO_COLOR=1", "CI=1",
	}
	w.git("init", "-q", "-b", "main")
	must(t, os.WriteFile(filepath.Join(w.work, "README.md"), []byte("# e2e\n"), 0o644))
	w.git("add", "README.md")
	w.git("-c", "user.name=e2e", "-c", "user.email=e2e@example.invalid", "commit", "-q", "-m", "start")
	return w
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// getenv reads the world's environment.
func (w *world) getenv(name string) string {
	for _, kv := range w.env {
		if v, ok := strings.CutPrefix(kv, name+"="); ok {
			return v
		}
	}
	return ""
}

func (w *world) configPath() string {
	return filepath.Join(w.home, ".config", "execgate", "exec-approvals.json")
}

func (w *world) git(args ...string) {
	w.t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir, cmd.Env = w.work, w.env
	if out, err := cmd.CombinedOutput(); err != nil {
		w.t.Fatalf("git %v: %v: %s", args, err, out)
	}
}

// execgate runs the installed execgate with args in the world.
func (w *world) execgate(args ...string) string {
	w.t.Helper()
	cmd := exec.Command(w.exe, args...)
	cmd.Dir, cmd.Env = w.work, w.env
	out, err := cmd.CombinedOutput()
	if err != nil {
		w.t.Fatalf("execgate %v: %v: %s", args, err, out)
	}
	return string(out)
}

// setup runs `execgate setup ARGS --apply`, then puts recording shims in
// place of install.sh's links (setup checks that they are links).
func (w *world) setup(args ...string) {
	w.t.Helper()
	w.execgate(append(append([]string{"setup"}, args...), "--apply")...)
	w.recordShims()
}

// recordShims replaces the shim links with scripts that record the argv
// (and environment) they are given, then are the execgate shim with that
// very argv ($0 included).
func (w *world) recordShims() {
	w.t.Helper()
	for _, name := range []string{"bash", "sh", "zsh"} {
		script := "#!/bin/bash\nf=" + shellQuote(w.argvDir) + "/$(date +%s%N)-$$\n" +
			"printf '%s\\0' \"$0\" \"$@\" > \"$f.argv\"\n/usr/bin/env -0 > \"$f.env\"\n" +
			"exec -a \"$0\" " + shellQuote(w.exe) + " \"$@\"\n"
		path := filepath.Join(w.shims, name)
		must(w.t, os.Remove(path))
		must(w.t, os.WriteFile(path, []byte(script), 0o755))
	}
}

// argvs are the argument vectors the shims were given, oldest first.
func (w *world) argvs() [][]string {
	w.t.Helper()
	entries, err := os.ReadDir(w.argvDir)
	must(w.t, err)
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".argv") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names) // nanosecond time first
	var out [][]string
	for _, n := range names {
		raw, err := os.ReadFile(filepath.Join(w.argvDir, n))
		must(w.t, err)
		out = append(out, strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00"))
	}
	return out
}

// argvEnvs are the environments the shims had, in the order of argvs.
func (w *world) argvEnvs() [][]string {
	w.t.Helper()
	entries, err := os.ReadDir(w.argvDir)
	must(w.t, err)
	var names []string
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".argv") {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	var out [][]string
	for _, n := range names {
		raw, err := os.ReadFile(filepath.Join(w.argvDir, strings.TrimSuffix(n, ".argv")+".env"))
		if err != nil {
			out = append(out, nil) // the recording zsh keeps no environment
			continue
		}
		out = append(out, strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00"))
	}
	return out
}

// audit is the audit log's events.
func (w *world) audit() []shim.Event {
	w.t.Helper()
	log := shim.AuditLog{Path: filepath.Join(w.home, ".local", "state", "execgate", "audit.jsonl")}
	var out []shim.Event
	err := log.Read(time.Time{}, func(ev shim.Event, _ []byte) error {
		out = append(out, ev)
		return nil
	})
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		w.t.Fatalf("audit log: %v", err)
	}
	return out
}

func (w *world) exists(rel string) bool {
	_, err := os.Stat(filepath.Join(w.home, rel))
	return err == nil
}

func copyFile(from, to string, perm os.FileMode) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'"'"'`) + "'" }

func currentUser() string {
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

// nodePath is the directory of the node the CLIs run with, with a colon.
func nodePath() string {
	if p, err := exec.LookPath("node"); err == nil {
		return filepath.Dir(p) + ":"
	}
	return ""
}

// run is one agent CLI run: its output and how long it took.
type run struct {
	stdout, stderr string
	status         int
	elapsed        time.Duration
}

// agentTimeout bounds one CLI run.
const agentTimeout = 3 * time.Minute

// start runs an agent CLI in the world's workspace with extra environment.
func (w *world) runAgent(argv []string, env ...string) run {
	w.t.Helper()
	ctx, cancel := context.WithTimeout(w.t.Context(), agentTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
	cmd.Dir = w.work
	cmd.Env = append(slices.Clone(w.env), env...)
	cmd.Stdin = nil
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	cmd.WaitDelay = 5 * time.Second
	start := time.Now()
	err := cmd.Run()
	r := run{stdout: out.String(), stderr: errb.String(), elapsed: time.Since(start), status: cmd.ProcessState.ExitCode()}
	if ctx.Err() != nil {
		w.t.Fatalf("%s did not finish in %v\nstdout: %s\nstderr: %s", filepath.Base(argv[0]), agentTimeout, r.stdout, r.stderr)
	}
	_ = err
	return r
}

func init() {
	// The recording shims are bash scripts; the CLIs are Linux and macOS
	// programs.
	if runtime.GOOS == "windows" {
		panic("e2e: not on Windows")
	}
}
