set -x; f() { echo in; }; f
