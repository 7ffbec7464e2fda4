s=hello; echo "${s/#he/HE} ${s/%lo/LO}"
