cat <<'EOF'
$not $(expanded)
EOF
