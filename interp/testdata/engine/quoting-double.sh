x=world; echo "hello \"$x\" \$literal \\back"
