echo to-stdout; echo to-stderr >&2; echo again
