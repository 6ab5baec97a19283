package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/fencebench/fencebench/explore"
	"github.com/fencebench/fencebench/scenarios"
)

func main() {
	from, _ := strconv.Atoi(os.Args[1])
	n, _ := strconv.Atoi(os.Args[2])
	hits := 0
	for s := from; s < from+n; s++ {
		sc, err := explore.Generate(uint64(s), explore.GenOptions{Variant: os.Getenv("V")})
		if err != nil {
			panic(err)
		}
		b, _ := scenarios.Marshal(sc)
		if strings.Contains(string(b), "metadata-read-") {
			hits++
			if hits <= 1 && os.Getenv("P") != "" {
				fmt.Println(string(b))
			}
		}
	}
	fmt.Println("metadata read faults:", hits, "of", n)
}
