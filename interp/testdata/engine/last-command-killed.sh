echo before; sh -c 'kill -KILL $$'
