bash -c 'echo "inner $0 $1"' innername innerarg; echo "outer rc=$?"
