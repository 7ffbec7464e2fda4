nosuchcommand-execgate arg; echo "rc=$?"
