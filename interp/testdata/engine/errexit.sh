set -e; echo before; false; echo after
