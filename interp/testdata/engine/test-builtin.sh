[ 3 -lt 4 ] && test -d / && echo yes; [ -e /nonexistent ]; echo $?
