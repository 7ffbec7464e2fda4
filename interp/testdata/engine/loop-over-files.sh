printf "1\n2\n" > b.txt; printf "1\n" > a.txt; for f in *.txt; do wc -l "$f"; done
