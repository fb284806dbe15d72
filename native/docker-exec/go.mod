module caravan/docker-exec

go 1.22
