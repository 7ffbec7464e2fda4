n=0; printf 'a\nb\n' | while read -r l; do n=$((n+1)); done; echo "$n"
