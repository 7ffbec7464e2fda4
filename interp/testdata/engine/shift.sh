shift; echo "$# $1"
