true | false | (exit 3); echo "${PIPESTATUS[@]}"
