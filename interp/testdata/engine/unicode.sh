echo "héllo wörld ✓ 日本"; s="日本語"; echo ${#s}
