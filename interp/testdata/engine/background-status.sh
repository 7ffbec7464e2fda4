(exit 9) & wait $!; echo "bg rc=$?"
