printf 'echo no shebang "$1"\n' > t.sh; chmod +x t.sh; ./t.sh arg; echo "rc=$?"
