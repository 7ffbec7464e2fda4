exec 3>&1; echo via-fd3 >&3; exec 3>&-; { echo err >&2; } 2>&1
