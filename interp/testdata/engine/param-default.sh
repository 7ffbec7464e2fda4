unset u; echo "${u:-def} ${u-d2} ${u:+alt}"; u=; echo "[${u:-empty}]"
