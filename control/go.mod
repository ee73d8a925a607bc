module github.com/e3fabric/e3fabric/control

go 1.22
