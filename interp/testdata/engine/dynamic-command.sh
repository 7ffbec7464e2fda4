cmd=$(type -P cat); echo "via $(basename "$cmd")" | "$cmd"; prog=printf; $prog "%s\n" dyn
