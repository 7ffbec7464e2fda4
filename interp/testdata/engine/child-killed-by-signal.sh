sh -c 'kill -TERM $$'; echo "rc=$?"
