package policy

// MaxInput is the longest command, in bytes, that the analysis reads; a
// longer one needs review unread.
const MaxInput = maxInput
