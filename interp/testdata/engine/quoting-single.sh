echo 'single $HOME `x` "q"'
