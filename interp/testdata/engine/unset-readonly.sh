readonly r=1; unset r; echo "rc=$?"
