echo 'a'"b"$'c'd"$(echo e)"
