package policy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// forbiddenSourceHosts are catalogues whose licence does not allow their
// text into this repository; an entry resting on them would invite copying.
var forbiddenSourceHosts = []string{"gtfobins.github.io"}

// sourceProblem says what is wrong with one entry's source, or "" when it
// is a plain https address of public documentation.
func sourceProblem(src string, required bool) string {
	if src == "" {
		if required {
			return "has no source: name the manual page, vendor documentation or ATT&CK technique it rests on"
		}
		return ""
	}
	u, err := url.Parse(src)
	switch {
	case err != nil:
		return fmt.Sprintf("source %q is not a URL: %v", src, err)
	case strings.ContainsAny(src, " \t\n"):
		return fmt.Sprintf("source %q contains white space", src)
	case u.Scheme != "https":
		return fmt.Sprintf("source %q is not an https URL", src)
	case !strings.Contains(u.Host, ".") || u.User != nil:
		return fmt.Sprintf("source %q has no plain host name", src)
	}
	for _, h := range forbiddenSourceHosts {
		if u.Host == h {
			return fmt.Sprintf("source %q: %s may not be cited (licence); cite the program's manual or ATT&CK", src, h)
		}
	}
	return ""
}

// walkSources calls visit for every struct in v that has a Source field,
// with a path naming it and whether the struct is a rule-like entry (it
// has an ID too) or a top-level read-only model of a tool family (it has
// subcommands), which must cite a source.
func walkSources(v reflect.Value, path string, depth int, visit func(path, src string, required bool)) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			walkSources(v.Elem(), path, depth, visit)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			walkSources(v.Index(i), fmt.Sprintf("%s[%d]", path, i), depth+1, visit)
		}
	case reflect.Map:
		for _, k := range v.MapKeys() {
			walkSources(v.MapIndex(k), fmt.Sprintf("%s[%v]", path, k), depth+1, visit)
		}
	case reflect.Struct:
		if f := v.FieldByName("Source"); f.IsValid() && f.Kind() == reflect.String {
			name := path
			required := false
			if id := v.FieldByName("ID"); id.IsValid() {
				name = fmt.Sprintf("%s (%s)", path, id.String())
				required = true
			}
			if sub := v.FieldByName("Sub"); sub.IsValid() && sub.Kind() == reflect.Map && sub.Len() > 0 && depth == 1 {
				required = true // a tool family's read-only model
			}
			visit(name, f.String(), required)
		}
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				walkSources(v.Field(i), path+"."+v.Type().Field(i).Name, depth, visit)
			}
		}
	}
}

// TestEverySourceCited checks that every rule, decoder and inline-code
// entry — any entry with an id — and every read-only model of a tool
// family names the public documentation it rests on, as an https URL,
// so that a reviewer can check the behaviour it claims.
func TestEverySourceCited(t *testing.T) {
	raw, err := os.ReadFile("rules.json")
	require.NoError(t, err)
	var rf ruleFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	require.NoError(t, dec.Decode(&rf), "rules.json")
	checked := 0
	walkSources(reflect.ValueOf(rf), "rules.json", 0, func(path, src string, required bool) {
		if required {
			checked++
		}
		if p := sourceProblem(src, required); p != "" {
			assert.Fail(t, path+" "+p)
		}
	})
	// The walk must have reached the rule lists; a rename of a field that
	// left it seeing nothing would pass vacuously.
	require.Greater(t, checked, len(rf.Rules)+len(rf.Decoders)+len(rf.Code)-1)
}

// TestSourceProblem checks the URL check itself on the shapes it must
// refuse and accept.
func TestSourceProblem(t *testing.T) {
	for _, tc := range []struct {
		src      string
		required bool
		ok       bool
	}{
		{"https://man7.org/linux/man-pages/man1/rm.1.html", true, true},
		{"https://attack.mitre.org/techniques/T1105/", true, true},
		{"", true, false},
		{"", false, true},
		{"http://man7.org/linux/man-pages/man1/rm.1.html", true, false},
		{"docs/threat-model.md", true, false},
		{"https://gtfobins.github.io/gtfobins/ld.so/", true, false},
		{"https://man7.org/a page", true, false},
		{"https://localhost/x", true, false},
	} {
		assert.Equal(t, tc.ok, sourceProblem(tc.src, tc.required) == "", "%q", tc.src)
	}
}
