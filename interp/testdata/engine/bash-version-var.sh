[[ -n $BASH_VERSION ]] && echo has-version; echo "$BASH"
