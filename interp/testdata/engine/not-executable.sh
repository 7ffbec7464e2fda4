printf 'echo x\n' > ./notexec; chmod -x ./notexec; ./notexec; echo "rc=$?"; rm -f ./notexec
