tmp=$(mktemp); echo one > "$tmp"; echo two >> "$tmp"; cat < "$tmp"; wc -l < "$tmp"; rm -f "$tmp"
