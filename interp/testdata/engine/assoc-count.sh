declare -A m=([a]=1 [b]=2); echo "${#m[@]}"
