set -e; x=$(false; echo y); echo "[$x]"
