f() { echo "$FUNCNAME line $LINENO"; }; f
