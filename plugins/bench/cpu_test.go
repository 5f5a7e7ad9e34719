package bench

import "runtime"

func runtimeCPUs() int { return runtime.NumCPU() }
