echo $'tab\tnew\nline' | od -c | head -3
