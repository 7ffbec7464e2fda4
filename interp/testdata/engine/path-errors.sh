./nosuch; echo "rc=$?"; mkdir d; ./d; echo "rc=$?"; touch f; ./f; echo "rc=$?"
