mkdir -p d/e; (cd d/e && basename "$PWD"); cd d; basename "$PWD"
