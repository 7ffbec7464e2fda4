export FOO=bar; sh -c 'echo "$FOO"'; BAR=1 sh -c 'echo "$BAR"'; echo "[${BAR-}]"
