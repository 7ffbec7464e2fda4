trap 'echo cleanup' EXIT; exit 7
