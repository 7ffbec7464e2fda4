declare -A m=([k1]=v1 [k2]=v2); echo "${m[k2]}"; echo "${!m[@]}" | tr ' ' '\n' | sort
