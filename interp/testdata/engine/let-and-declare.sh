declare -i n=3; n+=4; let m=n*2; echo $n $m
