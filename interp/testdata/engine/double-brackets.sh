[[ -n x && ! -z y ]] && [[ abc == a* ]] && [[ b < c ]] && echo ok
