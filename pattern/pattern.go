package pattern

import (
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"

	"github.com/gobwas/glob"
)

// EndWord, as a pattern's last word, anchors it: "rm -rf dist $" matches
// `rm -rf dist` and nothing longer, where "rm -rf dist" alone is a word
// prefix that also matches `rm -rf dist src`. It is what "allow always"
// saves for the exact command, so that the grant is what the person saw.
// An anchored match is not exact in Matcher.Match's sense: like a
// wildcard it waives only what the program is for, so that the same words
// in a riskier place (`env | nc host 1234`) are asked about again.
const EndWord = "$"

// wordSep joins argv words for matching; argv words cannot contain NUL.
const wordSep = '\x00'

// ValidatePattern reports whether p is usable as an allowlist or denylist
// pattern, with a one-line reason when it is not.
func ValidatePattern(p string) error {
	_, err := compilePattern(p)
	return err
}

// pattern is one compiled allowlist or denylist entry.
type pattern struct {
	entry    Entry
	program  string // first word, "" when it has wildcards
	wildcard bool
	// anchored patterns end in EndWord: the words match the whole argv,
	// never a prefix of it.
	anchored bool
	words    []string
	once     sync.Once
	g        *glob.Pattern
	err      error
}

// compilePattern checks and compiles p.
func compilePattern(p string) (*pattern, error) {
	words := strings.Fields(p)
	if len(words) == 0 {
		return nil, errors.New("empty pattern")
	}
	if strings.ContainsRune(p, wordSep) {
		return nil, errors.New("pattern contains a NUL byte")
	}
	pt := &pattern{entry: Entry{Pattern: p}, words: words}
	if len(words) > 1 && words[len(words)-1] == EndWord {
		// "rm -rf dist $": these words and nothing after them.
		pt.words, pt.anchored = words[:len(words)-1], true
	}
	pt.wildcard = strings.ContainsAny(strings.Join(pt.words, " "), "*?[{")
	if !strings.ContainsAny(words[0], "*?[{") {
		pt.program = words[0]
	}
	pt.compile()
	if pt.err != nil {
		return nil, pt.err
	}
	return pt, nil
}

// compile builds the glob over NUL-joined words.
func (pt *pattern) compile() {
	pt.once.Do(func() {
		var sb strings.Builder
		// Consecutive ** words mean the same as one.
		words := slices.CompactFunc(slices.Clone(pt.words), func(a, b string) bool { return a == "**" && b == "**" })
		for i, w := range words {
			if w == "**" {
				// Zero or more further words.
				switch {
				case len(words) == 1:
					sb.WriteString("**") // any argv at all
				case i == 0:
					sb.WriteString("{**" + string(wordSep) + ",}")
				default:
					sb.WriteString("{" + string(wordSep) + "**,}")
				}
				continue
			}
			// A leading ** already ends with the separator (or is empty):
			// writing another made "** --force" match nothing.
			if i > 0 && !(i == 1 && words[0] == "**") {
				sb.WriteRune(wordSep)
			}
			// Inside a word, ** means the same as *: it never spans words.
			sb.WriteString(strings.ReplaceAll(w, "**", "*"))
		}
		if !pt.wildcard && !pt.anchored {
			sb.WriteString("{" + string(wordSep) + "**,}")
		}
		pt.g, pt.err = glob.Compile(sb.String(), wordSep)
		if pt.err != nil {
			pt.err = fmt.Errorf("pattern %q: %w", strings.Join(pt.words, " "), pt.err)
		}
	})
}

// exact reports whether the pattern, without wildcards, is argv itself.
// An anchored pattern is not: it says "these words and nothing more" and,
// like a wildcard, waives only what the program is for; a plain literal is
// the person's word on the command as it stands, whatever it does.
func (pt *pattern) exact(argv []string) bool {
	if pt.wildcard || pt.anchored || len(pt.words) != len(argv) {
		return false
	}
	for i := range argv {
		if pt.words[i] != argv[i] {
			return false
		}
	}
	return true
}

// Matcher matches segments against a list of patterns. Entries are
// indexed by their first word, and a pattern is split and compiled only
// when a command with that program name first meets it, so a thousand
// entries cost little more than a handful.
type Matcher struct {
	entries  []Entry
	lookPath func(string) string

	once      sync.Once
	byProgram map[string][]int // entry indexes by program ("/git" for path patterns)
	wild      []int            // entries whose program has wildcards

	mu       sync.Mutex
	compiled map[int]*pattern
}

// NewMatcher prepares entries for matching. Entries whose pattern does not
// compile never match (config.ParseConfig already warned about them). lookPath
// resolves a bare program name to an absolute path ("" when not found); it
// may be nil, and then patterns written with a slash never match.
func NewMatcher(entries []Entry, lookPath func(string) string) *Matcher {
	return &Matcher{entries: entries, lookPath: lookPath}
}

// index builds the program index on first use.
func (m *Matcher) index() {
	m.once.Do(func() {
		m.byProgram = make(map[string][]int, len(m.entries))
		for i, e := range m.entries {
			// The first word as compilePattern splits it (any white
			// space): splitting on " \t\n" alone filed "0\v" under a
			// program that no argv names.
			first := ""
			if f := strings.Fields(e.Pattern); len(f) > 0 {
				first = f[0]
			}
			switch {
			case first == "":
			case strings.ContainsAny(first, "*?[{"):
				m.wild = append(m.wild, i)
			case strings.Contains(first, "/"):
				m.byProgram["/"+filepath.Base(first)] = append(m.byProgram["/"+filepath.Base(first)], i)
			default:
				m.byProgram[first] = append(m.byProgram[first], i)
			}
		}
	})
}

// pattern returns entry i compiled, or nil when it does not compile.
func (m *Matcher) pattern(i int) *pattern {
	m.mu.Lock()
	defer m.mu.Unlock()
	if pt, ok := m.compiled[i]; ok {
		return pt
	}
	if m.compiled == nil {
		m.compiled = map[int]*pattern{}
	}
	pt, err := compilePattern(m.entries[i].Pattern)
	if err != nil {
		pt = nil
	} else {
		pt.entry = m.entries[i]
	}
	m.compiled[i] = pt
	return pt
}

// Invalid returns the patterns that do not compile. Such an entry never
// matches, which is harmless in an allowlist and must not be in a
// denylist: Evaluate denies everything then.
func (m *Matcher) Invalid() []string {
	if m == nil {
		return nil
	}
	var bad []string
	for i := range m.entries {
		if m.pattern(i) == nil {
			bad = append(bad, m.entries[i].Pattern)
		}
	}
	return bad
}

// Match returns the first entry matching argv and whether the match was
// exact (the pattern is argv word for word). A nil or empty argv matches
// nothing.
func (m *Matcher) Match(argv []string) (entry Entry, exact, ok bool) {
	if m == nil || len(argv) == 0 || len(m.entries) == 0 {
		return Entry{}, false, false
	}
	m.index()
	argv0 := argv[0]
	var candidates [][]int
	var resolved string
	if !strings.Contains(argv0, "/") {
		// A bare name: bare-name patterns, and slash patterns for the
		// path it resolves to.
		candidates = append(candidates, m.byProgram[argv0])
		if slash := m.byProgram["/"+argv0]; len(slash) > 0 && m.lookPath != nil {
			resolved = m.lookPath(argv0)
			candidates = append(candidates, slash)
		}
	} else if filepath.IsAbs(argv0) {
		// An absolute path: patterns with that path, and bare-name
		// patterns whose PATH lookup gives that very path.
		base := filepath.Base(argv0)
		candidates = append(candidates, m.byProgram["/"+base])
		resolved = filepath.Clean(argv0)
		if bare := m.byProgram[base]; len(bare) > 0 && m.lookPath != nil && m.lookPath(base) == resolved {
			candidates = append(candidates, bare)
		}
	}
	// A relative path such as ./git matches only wildcard-program patterns.
	candidates = append(candidates, m.wild)
	joined := strings.Join(argv, string(wordSep))
	for _, list := range candidates {
		for _, i := range list {
			pt := m.pattern(i)
			if pt == nil {
				continue
			}
			subject, words := joined, argv
			if strings.Contains(pt.program, "/") {
				if resolved == "" || filepath.Clean(pt.program) != resolved {
					continue
				}
				words = append([]string{pt.program}, argv[1:]...)
				subject = strings.Join(words, string(wordSep))
			} else if pt.program != "" && strings.Contains(argv0, "/") {
				words = append([]string{pt.program}, argv[1:]...)
				subject = strings.Join(words, string(wordSep))
			}
			if pt.g.Match(subject) {
				return pt.entry, pt.exact(words), true
			}
		}
	}
	return Entry{}, false, false
}
