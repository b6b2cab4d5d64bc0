module example.com/gostack

go 1.19
