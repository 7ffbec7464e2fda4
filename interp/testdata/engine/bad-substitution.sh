x=1; echo ${x:-:}; echo ${x;}
