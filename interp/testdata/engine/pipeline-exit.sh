echo a | exit 3; echo "status $?"
