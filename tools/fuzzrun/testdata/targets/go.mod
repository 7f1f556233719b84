module example.com/fuzzrun-targets

go 1.26
