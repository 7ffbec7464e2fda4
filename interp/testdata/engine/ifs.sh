IFS=: read -r a b c <<< "x:y:z"; echo "$c$b$a"
