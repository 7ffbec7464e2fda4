unset u; echo "${u:?u is unset}"; echo not reached
