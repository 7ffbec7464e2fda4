read -ra parts <<< "p q r"; echo "${parts[1]}"
