printf '%s|%5d|%-4s|%x\n' str 42 ab 255
