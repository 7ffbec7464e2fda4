printf '\x00\x01\x02\xff' | od -An -tx1
