trap 'echo "err at line $LINENO"' ERR; false; echo continuing
