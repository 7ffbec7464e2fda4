read -r x; echo "rc=$? [${x-}]"
