echo partial; exit 3
