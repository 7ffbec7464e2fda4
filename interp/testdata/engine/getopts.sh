set -- -a -b val rest; while getopts ab: o; do echo "opt $o ${OPTARG:-}"; done; shift $((OPTIND-1)); echo "rest $*"
