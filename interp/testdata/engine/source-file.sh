tmp=$(mktemp); echo 'sourced_var=42' > "$tmp"; . "$tmp"; echo $sourced_var; rm -f "$tmp"
