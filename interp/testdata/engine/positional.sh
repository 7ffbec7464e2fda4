echo "0=$0 1=$1 2=$2 #=$#"; for a in "$@"; do echo "<$a>"; done
