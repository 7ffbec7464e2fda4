arr=(one "two three" four); echo "${#arr[@]} ${arr[1]}"; for x in "${arr[@]}"; do echo "-$x"; done
