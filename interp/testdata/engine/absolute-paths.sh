/bin/echo abs; "$(command -v env)" printf "%s\n" via-env
