cat <<EOF
value: $((6*7))
  indented $1
EOF
