p=/usr/local/lib/file.tar.gz; echo "${p##*/} ${p%%.*} ${p#*/} ${p%.*} ${#p} ${p/lib/LIB} ${p^^}"
