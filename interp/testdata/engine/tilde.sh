HOME=/tmp/fakehome; echo ~ ~/x
