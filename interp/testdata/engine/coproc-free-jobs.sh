sleep 0.01 & wait; jobs; echo jobs-ok
