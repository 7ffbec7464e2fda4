package policy

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// set puts v under key (tests mutate copies of the rule table).
func (t *table[V]) set(key string, v V) {
	i, ok := slices.BinarySearchFunc(*t, key, func(e entry[V], k string) int { return strings.Compare(e.Key, k) })
	if ok {
		(*t)[i].Val = v
		return
	}
	*t = slices.Insert(*t, i, entry[V]{key, v})
}

// del removes key.
func (t *table[V]) del(key string) {
	i, ok := slices.BinarySearchFunc(*t, key, func(e entry[V], k string) int { return strings.Compare(e.Key, k) })
	if ok {
		*t = slices.Delete(*t, i, i+1)
	}
}

// TestTable: a table answers as the map it replaces, and reads and
// writes the same JSON.
func TestTable(t *testing.T) {
	m := map[string]int{"b": 2, "a": 1, "c": 3, "": 0}
	tb := tableOf(m)
	for k, v := range m {
		got, ok := tb.lookup(k)
		assert.True(t, ok, k)
		assert.Equal(t, v, got)
	}
	assert.False(t, tb.has("d"))
	assert.Equal(t, 0, tb.get("zz"))
	var keys []string
	for k := range tb.all() {
		keys = append(keys, k)
	}
	assert.Equal(t, []string{"", "a", "b", "c"}, keys)

	raw, err := json.Marshal(tb)
	require.NoError(t, err)
	var back table[int]
	require.NoError(t, json.Unmarshal(raw, &back))
	assert.Equal(t, tb, back)
	tb.set("d", 4)
	tb.del("a")
	assert.Equal(t, []string{"", "b", "c", "d"}, tableKeys(tb))
	assert.Error(t, json.Unmarshal([]byte(`{"a":"x"}`), &back))

	s := setOf([]string{"y", "x", "y"})
	assert.Equal(t, nameSet{"x", "y"}, s)
	assert.True(t, s.has("x"))
	assert.False(t, s.has("z"))
}

// TestStaticTablesSorted: the package's tables and name sets are written
// as sorted literals (a lookup is a binary search), and each name appears
// once.
func TestStaticTablesSorted(t *testing.T) {
	sets := map[string]nameSet{
		"programVars": programVars, "inertPrograms": inertPrograms, "numericParams": numericParams,
		"testArithOps": testArithOps, "tempDirVars": tempDirVars, "kubeNameOutputs": kubeNameOutputs,
		"stdinNames": stdinNames, "publicParams": publicParams, "harmlessSetOption": harmlessSetOption,
		"harmlessEnv": harmlessEnv, "knownNodes": knownNodes,
		"zshSpecialParams": zshSpecialParams, "zshHookFunctions": zshHookFunctions, "zshSetOptions": zshSetOptions,
		"unsupportedNodes": unsupportedNodes, "effects": effects, "stateListers": stateListers,
		// paths (issue 22)
		"publicProcEntries": publicProcEntries, "nameListers": nameListers, "searchesHere": searchesHere,
		"patternFirst": patternFirst, "contentCopiers": contentCopiers, "contentMakers": contentMakers,
		"treeMakers":   treeMakers, // the kernel sandbox (issue 24)
		"offlineFlags": offlineFlags, "modulePathVars": modulePathVars, "inertGoFlags": inertGoFlags,
		"elsewhereOptions": elsewhereOptions, "registryCredentials": registryCredentials, "registryActions": registryActions, "regenerated": regenerated, "indexVars": indexVars, "npmAuthKeys": npmAuthKeys,
		"npmValueOptions": npmValueOptions, "npmFlagOptions": npmFlagOptions, "clientCertKeys": clientCertKeys, "npmrcConfigKeys": npmrcConfigKeys, "elsewhereVars": elsewhereVars, "npmElsewhere": npmElsewhere,
		"unitStateProperties": unitStateProperties, "githubHosts": githubHosts,
	}
	for name, s := range sets {
		assert.True(t, slices.IsSorted(s), "%s is not sorted", name)
		assert.Equal(t, len(s), len(slices.Compact(slices.Clone(s))), "%s has a name twice", name)
	}
	keys := map[string][]string{
		"shellLangs": tableKeys(shellLangs), "dryRunOptions": tableKeys(dryRunOptions), "reasonEffects": tableKeys(reasonEffects),
		"writerReasons": tableKeys(writerReasons), "snapshotCode": tableKeys(snapshotCode), "bundledTools": tableKeys(bundledTools), "stateFilters": tableKeys(stateFilters),
		"fileWriters": tableKeys(fileWriters), "codeFileOptions": tableKeys(codeFileOptions),
		"zshCommands": tableKeys(zshCommands), "builtinTable": tableKeys(builtinTable), "downloadOutputs": tableKeys(downloadOutputs),
		"defaultTrustedSources": tableKeys(defaultTrustedSources), "claudeEnvHookOrder": tableKeys(claudeEnvHookOrder),
		// paths (issue 22)
		"linkFollowers": tableKeys(linkFollowers), "ciControlFiles": tableKeys(ciControlFiles),
		// the kernel sandbox (issue 24)
		"ruleNeeds": tableKeys(ruleNeeds), "hostServices": tableKeys(hostServices), "lossPrograms": tableKeys(lossPrograms),
		"fetchers": tableKeys(fetchers), "confinedFetches": tableKeys(confinedFetches), "npmCommands": tableKeys(npmCommands),
		"npmShorthands": tableKeys(npmShorthands), "npmFlagValues": tableKeys(npmFlagValues),
	}
	for name, k := range keys {
		assert.True(t, slices.IsSorted(k), "%s is not sorted", name)
		assert.Equal(t, len(k), len(slices.Compact(slices.Clone(k))), "%s has a name twice", name)
	}
	// Every table and set of the package is listed above.
	listed := len(sets) + len(keys)
	declared := 0
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") || f == "rules_gen.go" {
			continue
		}
		src, err := os.ReadFile(f)
		require.NoError(t, err)
		for _, line := range strings.Split(string(src), "\n") {
			if strings.HasPrefix(line, "var ") && (strings.Contains(line, " = nameSet{") || strings.Contains(line, " = table[")) {
				declared++
			}
		}
	}
	assert.Equal(t, declared, listed, "a package-level table or name set is not checked here: add it")
}

// TestBuiltinAliases: readarray is mapfile under another name, and reads
// its operands the same way.
func TestBuiltinAliases(t *testing.T) {
	mapfile := builtinTable.get("mapfile")
	require.NotNil(t, mapfile)
	assert.Same(t, mapfile, builtinTable.get("readarray"))
	assert.Equal(t, []string{"-C"}, mapfile.codeOptions)
}
