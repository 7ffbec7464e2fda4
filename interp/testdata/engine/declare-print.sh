declare -a arr=(1 2); declare -p arr; f() { :; }; declare -f f
