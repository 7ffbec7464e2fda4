package pattern

// Entry is one allowlist or denylist pattern with its bookkeeping.
type Entry struct {
	Pattern          string `json:"pattern"`
	ID               string `json:"id,omitempty"`
	Source           string `json:"source,omitempty"`
	LastUsedAt       int64  `json:"lastUsedAt,omitempty"`
	LastUsedCommand  string `json:"lastUsedCommand,omitempty"`
	LastResolvedPath string `json:"lastResolvedPath,omitempty"`
}
