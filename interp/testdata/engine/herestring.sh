tr a-z A-Z <<< "shout"
