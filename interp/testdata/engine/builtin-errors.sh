cd /nonexistent-dir; echo "rc=$?"; shift 5; echo "rc=$?"
