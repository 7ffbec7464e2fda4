s="version 1.22.3"; if [[ $s =~ ([0-9]+)\.([0-9]+) ]]; then echo "${BASH_REMATCH[0]} ${BASH_REMATCH[2]}"; fi
