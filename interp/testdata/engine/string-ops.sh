s="Hello, World"; echo "${s,,} ${s:7} ${s:0:5} ${s//o/0}"
