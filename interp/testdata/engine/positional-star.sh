IFS=,; echo "$*"
