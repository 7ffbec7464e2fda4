echo before; kill -TERM $$; echo after
