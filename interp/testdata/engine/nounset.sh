set -u; echo "${1}"; echo "$undefined_var"; echo unreachable
