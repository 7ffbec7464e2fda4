for w in apple Bob 42 -x; do case $w in [a-z]*) echo lower;; [A-Z]*) echo upper;; *[0-9]) echo num;; *) echo other;; esac; done
