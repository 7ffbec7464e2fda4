mkdir d; echo | cd d; basename "$PWD" | grep -c "^d$"
