for ((i=0;i<3;i++)); do printf '%d ' $i; done; echo
