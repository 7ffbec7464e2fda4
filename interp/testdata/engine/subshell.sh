x=outer; (x=inner; echo $x); echo $x
