echo {a,b}{1..3} {z..x}
