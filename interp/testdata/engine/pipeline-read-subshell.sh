echo hello | read x; echo "[$x]"
