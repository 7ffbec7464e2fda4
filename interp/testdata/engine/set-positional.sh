set -- x y z; echo "$# $2"
