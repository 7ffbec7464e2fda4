read -t 1 x <<< "abc"; echo "$x"
