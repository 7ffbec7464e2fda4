(exit 0); echo $?; (exit 1); echo $?; (exit 42); echo $?; (exit 255); echo $?; (exit 256); echo $?
