shopt -s nullglob; cd "$(mktemp -d)"; for f in *.none; do echo "$f"; done; echo done; rmdir "$PWD"
