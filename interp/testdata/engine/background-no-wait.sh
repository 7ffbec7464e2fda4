(sleep 0.2; echo late) &
echo early
