v="a   b  c"; for w in $v; do echo "[$w]"; done; echo "[$v]"
