set -euo pipefail; f() { echo in; return 0; }; f; x=$(echo ok); echo "$x"; ls /nonexistent-dir
