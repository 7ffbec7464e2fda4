seq 1 10 | grep -v 3 | sort -rn | head -3
