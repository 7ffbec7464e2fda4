// Package proctest finds and watches the real processes that a test's
// command started, through /proc, so that tests of signals and process
// groups can check which of them a signal ended.
package proctest

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

// SleepArg returns an argument for sleep(1) that no other process on the
// machine is likely to have: a test finds its own sleeps by it, even while
// other test runs start the same commands.
func SleepArg() string {
	return fmt.Sprintf("%d.%06d", 300+rand.IntN(600), rand.IntN(1000000))
}

// Stat is what the tests need of /proc/PID/stat.
type Stat struct {
	State           byte
	PPid, Pgid, Sid int
}

// ReadStat reads /proc/PID/stat; ok is false once the process is reaped.
func ReadStat(pid int) (Stat, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return Stat{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return Stat{}, false
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 4 || f[0] == "" {
		return Stat{}, false
	}
	var st Stat
	st.State = f[0][0]
	st.PPid, _ = strconv.Atoi(f[1])
	st.Pgid, _ = strconv.Atoi(f[2])
	st.Sid, _ = strconv.Atoi(f[3])
	return st, true
}

// Gone reports whether pid has exited (a zombie counts: nothing runs).
func Gone(pid int) bool {
	st, ok := ReadStat(pid)
	return !ok || st.State == 'Z' || st.State == 'X'
}

// Eventually polls cond every 10ms for up to d.
func Eventually(d time.Duration, cond func() bool) bool {
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return true
		}
	}
	return cond()
}

// find returns the live process whose argv is exactly argv, or 0.
func find(argv []string) int {
	want := []byte(strings.Join(argv, "\x00"))
	dir, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	for _, d := range dir {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + d.Name() + "/cmdline")
		if err == nil && bytes.Equal(bytes.TrimRight(b, "\x00"), want) && !Gone(pid) {
			return pid
		}
	}
	return 0
}

// Sleeps waits (up to 10s) until a `sleep ARG` runs for each of args and
// returns their pids in that order. Each is SIGKILLed when the test ends,
// whatever its outcome.
func Sleeps(t testing.TB, args ...string) []int {
	t.Helper()
	pids := make([]int, len(args))
	for i, a := range args {
		ok := Eventually(10*time.Second, func() bool {
			pids[i] = find([]string{"sleep", a})
			return pids[i] != 0
		})
		if !ok {
			t.Fatalf("sleep %s did not start", a)
		}
		// A pidfd, so that the cleanup cannot hit a process that inherited
		// the pid.
		if p, err := os.FindProcess(pids[i]); err == nil {
			t.Cleanup(func() { p.Kill(); p.Release() })
		}
	}
	return pids
}
