diff <(printf 'a\nb\n') <(printf 'a\nc\n'); echo "diff rc=$?"
