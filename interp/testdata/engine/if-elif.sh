x=2; if ((x==1)); then echo one; elif ((x==2)); then echo two; else echo many; fi
