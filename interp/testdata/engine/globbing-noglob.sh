set -f; echo *; set +f
