false & wait $!; echo $?
