printf 'l1\nl2\nl3\n' | while read -r line; do echo "got $line"; done
