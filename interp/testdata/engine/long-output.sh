seq 1 20000 | tail -2
