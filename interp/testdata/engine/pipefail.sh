set -o pipefail; false | true; echo "rc=$?"; set +o pipefail; false | true; echo "rc=$?"
