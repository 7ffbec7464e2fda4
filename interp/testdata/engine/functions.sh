f() { local x=$1; echo "in f: $x $#"; return 3; }; f a b; echo "rc=$?"
