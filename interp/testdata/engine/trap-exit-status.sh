trap 'exit 5' EXIT; exit 2
