cmd='echo evaluated $1'; eval "$cmd"
