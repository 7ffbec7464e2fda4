exit 255
