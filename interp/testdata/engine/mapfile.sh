mapfile -t lines < <(printf 'x\ny\nz\n'); echo "${#lines[@]} ${lines[2]}"
