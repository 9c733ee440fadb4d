package analyzer

// The shard settings, for the tests of the threshold.
const (
	ShardObjects     = shardObjects
	DefaultShardSize = defaultShardSize
)
