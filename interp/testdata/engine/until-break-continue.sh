i=0; until ((i>=6)); do ((i++)); ((i==2)) && continue; ((i==5)) && break; echo $i; done
