(sleep 0.05; echo bg done) & wait; echo after wait
