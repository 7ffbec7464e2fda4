f() { read -r l; v=$l; }; echo x | f; echo "[${v-unset}]"
