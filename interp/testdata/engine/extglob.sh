shopt -s extglob; x=aaab; echo "${x##+(a)}"; [[ foo.txt == !(*.sh) ]] && echo not-sh
