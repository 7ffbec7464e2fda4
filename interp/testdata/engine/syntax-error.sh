echo before
if then fi
