printf -v out '%03d' 7; echo "$out"
