//! Seeded workload generators: `poisson:n=1000,rate=100,mean=5,seed=1` etc.
