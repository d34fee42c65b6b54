package driver

// jitter is the uniform draw in [0, 1) for job's retry-th resubmission,
// given to client.Backoff.Delay: a pure function of (seed, job, retry), so
// a job's schedule is the same for a seed whatever order the fleet's
// reports arrive in, and no global random source is used.
func jitter(seed uint64, job, retry int) float64 {
	x := splitmix64(seed ^ splitmix64(uint64(job)<<32^uint64(uint32(retry))))
	return float64(x>>11) / (1 << 53)
}

// splitmix64 is Steele, Lea and Flood's 64-bit mixer (the SplitMix64
// finaliser): a bijection whose output bits all depend on every input bit.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}
