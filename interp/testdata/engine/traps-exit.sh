trap 'echo trapped exit' EXIT; echo body
