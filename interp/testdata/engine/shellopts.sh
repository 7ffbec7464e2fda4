echo "$-" | tr -d 'hH'; shopt -q extglob && echo extglob-on || echo extglob-off
