echo "unclosed
