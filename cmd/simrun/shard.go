package main

import (
	"fmt"
	"strconv"
	"strings"
)

// shardSpec is the share of a sweep one machine runs: point k is its
// when k mod N == I (rig.ShardPoints). From says where I and N came
// from, for messages.
type shardSpec struct {
	I, N int
	From string
}

// noShard is the From of a run of the whole sweep.
const noShard = "no shard"

// sharded reports whether the run is a shard (given by --shard or the
// environment, 0/1 included, so that a matrix of one behaves as one of
// three): it writes its points and no report.
func (s shardSpec) sharded() bool { return s.From != noShard }

func (s shardSpec) String() string { return fmt.Sprintf("%d/%d", s.I, s.N) }

// resolveShard reads --shard (I/N, auto or absent) and, for auto or
// absent, the batch systems' variables, in this order:
//
//   - SIMRUN_SHARD=I/N, the generic form (a CI matrix sets it);
//   - JOB_COMPLETION_INDEX, the index of a Kubernetes Indexed Job's pod
//     (batch/v1 Job, completionMode: Indexed), with N from
//     --shard-count or SHARD_COUNT: the Job does not expose its
//     completions count to the pod;
//   - SLURM_ARRAY_TASK_ID, a Slurm array job's task, with N from
//     SLURM_ARRAY_TASK_COUNT, or from SLURM_ARRAY_TASK_MIN and _MAX;
//     the index is (ID - MIN) / STEP, so --array=1-8 and --array=0-14:2
//     both number their tasks from 0 (sbatch(1), "OUTPUT ENVIRONMENT
//     VARIABLES").
//
// None set: the whole sweep (shard 0/1). I counts from 0.
func resolveShard(flagValue string, count int, getenv func(string) string) (shardSpec, error) {
	whole := shardSpec{I: 0, N: 1, From: noShard}
	if flagValue != "" && flagValue != "auto" {
		s, err := parseShard(flagValue)
		if err != nil {
			return s, fmt.Errorf("--shard %q: %w", flagValue, err)
		}
		s.From = "--shard"
		return s, nil
	}
	if v := getenv("SIMRUN_SHARD"); v != "" {
		s, err := parseShard(v)
		if err != nil {
			return s, fmt.Errorf("SIMRUN_SHARD=%q: %w", v, err)
		}
		s.From = "SIMRUN_SHARD"
		return s, nil
	}
	if v := getenv("JOB_COMPLETION_INDEX"); v != "" {
		i, err := nonNegative(v)
		if err != nil {
			return whole, fmt.Errorf("JOB_COMPLETION_INDEX=%q: %w", v, err)
		}
		n, from := count, "--shard-count"
		if n == 0 {
			c := getenv("SHARD_COUNT")
			if c == "" {
				return whole, fmt.Errorf("JOB_COMPLETION_INDEX=%d is set (a Kubernetes Indexed Job) but not the number of shards: give --shard-count N or SHARD_COUNT=N, the Job's completions", i)
			}
			if n, err = nonNegative(c); err != nil {
				return whole, fmt.Errorf("SHARD_COUNT=%q: %w", c, err)
			}
			from = "SHARD_COUNT"
		}
		return checkShard(shardSpec{I: i, N: n, From: "JOB_COMPLETION_INDEX and " + from})
	}
	if v := getenv("SLURM_ARRAY_TASK_ID"); v != "" {
		return slurmShard(v, getenv)
	}
	return whole, nil
}

// slurmShard numbers a Slurm array task from 0.
func slurmShard(id string, getenv func(string) string) (shardSpec, error) {
	task, err := nonNegative(id)
	if err != nil {
		return shardSpec{}, fmt.Errorf("SLURM_ARRAY_TASK_ID=%q: %w", id, err)
	}
	num := func(name string, def int) (int, error) {
		v := getenv(name)
		if v == "" {
			return def, nil
		}
		n, err := nonNegative(v)
		if err != nil {
			return 0, fmt.Errorf("%s=%q: %w", name, v, err)
		}
		return n, nil
	}
	lo, err := num("SLURM_ARRAY_TASK_MIN", 0)
	if err != nil {
		return shardSpec{}, err
	}
	step, err := num("SLURM_ARRAY_TASK_STEP", 1)
	if err != nil {
		return shardSpec{}, err
	}
	step = max(step, 1)
	n, err := num("SLURM_ARRAY_TASK_COUNT", 0)
	if err != nil {
		return shardSpec{}, err
	}
	if n == 0 {
		hi, err := num("SLURM_ARRAY_TASK_MAX", -1)
		if err != nil {
			return shardSpec{}, err
		}
		if hi < 0 {
			return shardSpec{}, fmt.Errorf("SLURM_ARRAY_TASK_ID=%d is set but neither SLURM_ARRAY_TASK_COUNT nor SLURM_ARRAY_TASK_MAX: cannot tell the number of shards", task)
		}
		if hi < lo {
			return shardSpec{}, fmt.Errorf("SLURM_ARRAY_TASK_MAX=%d is below SLURM_ARRAY_TASK_MIN=%d", hi, lo)
		}
		n = (hi-lo)/step + 1
	}
	if task < lo || (task-lo)%step != 0 {
		return shardSpec{}, fmt.Errorf("SLURM_ARRAY_TASK_ID=%d is not in the array %d, %d, ... (SLURM_ARRAY_TASK_MIN, _STEP)", task, lo, lo+step)
	}
	return checkShard(shardSpec{I: (task - lo) / step, N: n, From: "SLURM_ARRAY_TASK_ID"})
}

// parseShard reads I/N.
func parseShard(v string) (shardSpec, error) {
	a, b, ok := strings.Cut(v, "/")
	if !ok {
		return shardSpec{}, fmt.Errorf("expected I/N (shard I of N, from 0: 0/3, 1/3, 2/3) or auto")
	}
	i, err := nonNegative(a)
	if err != nil {
		return shardSpec{}, fmt.Errorf("index %q: %w", a, err)
	}
	n, err := nonNegative(b)
	if err != nil {
		return shardSpec{}, fmt.Errorf("count %q: %w", b, err)
	}
	return checkShard(shardSpec{I: i, N: n})
}

func checkShard(s shardSpec) (shardSpec, error) {
	if s.N < 1 {
		return s, fmt.Errorf("%d shards: give 1 or more", s.N)
	}
	if s.I >= s.N {
		return s, fmt.Errorf("shard %d of %d: shards count from 0, so the last is %d/%d", s.I, s.N, s.N-1, s.N)
	}
	return s, nil
}

// maxShards bounds a shard count read from a flag or the environment;
// more shards than a sweep's points leaves some empty, which is allowed.
const maxShards = 1 << 20

func nonNegative(v string) (int, error) {
	n, err := strconv.Atoi(strings.TrimSpace(v))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("not a non-negative integer")
	}
	if n > maxShards {
		return 0, fmt.Errorf("%d is over %d", n, maxShards)
	}
	return n, nil
}
