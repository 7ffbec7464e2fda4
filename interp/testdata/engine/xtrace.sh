set -x; a=1; echo "$a"; set +x; echo quiet
