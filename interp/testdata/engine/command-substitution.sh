n=$(printf 'a\nb\nc\n' | wc -l); echo "lines: $n $(echo `echo nested`)"
