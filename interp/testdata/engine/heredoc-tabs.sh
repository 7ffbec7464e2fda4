cat <<-EOF
		stripped
	EOF
