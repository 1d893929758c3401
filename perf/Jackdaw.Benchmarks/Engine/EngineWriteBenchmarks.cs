using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using BenchmarkDotNet.Engines;
using Jackdaw.Storage.Engine;
using Microsoft.Data.Sqlite;

namespace Jackdaw.Benchmarks.Engine;

/// <summary>
/// Durable inserts of 1 KiB values, our engine against SQLite (WAL, synchronous=FULL, integer
/// primary key) as the baseline of each category. Each iteration starts from an empty store.
/// Monitoring strategy: an invocation is one whole workload (seconds), so no pilot or unrolling.
/// </summary>
[MemoryDiagnoser]
[CategoriesColumn]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[SimpleJob(RunStrategy.Monitoring, launchCount: 1, warmupCount: 1, iterationCount: 3)]
public class EngineWriteBenchmarks
{
    private const int SequentialCount = 1_000_000;
    private const int SequentialBatch = 1_000;
    private const int RandomCount = 100_000;
    private const int RandomBatch = 100;
    private const int DurableCount = 1_000;

    private readonly byte[] _value = EngineStores.Value(1);
    private readonly long[] _randomKeys = EngineStores.RandomKeys(RandomCount, 42);
    private string? _folder;
    private StorageEnvironment? _env;
    private SqliteConnection? _sqlite;

    [IterationSetup(Targets = [nameof(SequentialInsertsJackdaw), nameof(RandomInsertsJackdaw), nameof(DurableSinglePutJackdaw)])]
    public void SetupJackdaw()
    {
        _folder = EngineStores.NewFolder("write-jackdaw");
        _env = EngineStores.OpenJackdaw(_folder);
    }

    [IterationSetup(Targets = [nameof(SequentialInsertsSqlite), nameof(RandomInsertsSqlite), nameof(DurableSinglePutSqlite)])]
    public void SetupSqlite()
    {
        _folder = EngineStores.NewFolder("write-sqlite");
        _sqlite = EngineStores.OpenSqlite(_folder);
    }

    [IterationCleanup]
    public void Cleanup()
    {
        if (_env is not null)
        {
            _env.Flush();
            var stats = _env.GetStats();
            Console.WriteLine($"// jackdaw: {stats.UsedPages} pages in use ({stats.UsedPages * 8192} bytes), data file {stats.DataFileSize} bytes");
            _env.Dispose();

            // Closing trims the tail that growth steps left past the high-water mark.
            Console.WriteLine($"// jackdaw: data file after close {new FileInfo(Path.Combine(_folder!, "data.jdb")).Length} bytes");
        }

        if (_sqlite is not null)
        {
            EngineStores.Execute(_sqlite, "PRAGMA wal_checkpoint(TRUNCATE);");
            _sqlite.Dispose();
            SqliteConnection.ClearAllPools();
        }

        if (_folder is not null)
        {
            Console.WriteLine($"// folder size {EngineStores.FolderSize(_folder)} bytes");
        }

        EngineStores.DeleteFolder(_folder);
        _env = null;
        _sqlite = null;
        _folder = null;
    }

    [BenchmarkCategory("Sequential 1M, tx of 1000"), Benchmark(Baseline = true)]
    public void SequentialInsertsSqlite()
    {
        using var inserter = new SqliteInserter(_sqlite!);
        for (var i = 0; i < SequentialCount; i += SequentialBatch)
        {
            using var tx = _sqlite!.BeginTransaction();
            for (var j = i; j < i + SequentialBatch; j++)
            {
                inserter.Insert(tx, j, _value);
            }

            tx.Commit();
        }
    }

    [BenchmarkCategory("Sequential 1M, tx of 1000"), Benchmark]
    public void SequentialInsertsJackdaw()
    {
        Span<byte> key = stackalloc byte[8];
        for (var i = 0; i < SequentialCount; i += SequentialBatch)
        {
            using var tx = _env!.BeginWrite();
            var tree = tx.CreateTree("kv");
            for (var j = i; j < i + SequentialBatch; j++)
            {
                EngineStores.Key(key, j);
                tree.Put(key, _value);
            }

            tx.Commit();
        }
    }

    [BenchmarkCategory("Random 100k, tx of 100"), Benchmark(Baseline = true)]
    public void RandomInsertsSqlite()
    {
        using var inserter = new SqliteInserter(_sqlite!);
        for (var i = 0; i < RandomCount; i += RandomBatch)
        {
            using var tx = _sqlite!.BeginTransaction();
            for (var j = i; j < i + RandomBatch; j++)
            {
                inserter.Insert(tx, _randomKeys[j], _value);
            }

            tx.Commit();
        }
    }

    [BenchmarkCategory("Random 100k, tx of 100"), Benchmark]
    public void RandomInsertsJackdaw()
    {
        Span<byte> key = stackalloc byte[8];
        for (var i = 0; i < RandomCount; i += RandomBatch)
        {
            using var tx = _env!.BeginWrite();
            var tree = tx.CreateTree("kv");
            for (var j = i; j < i + RandomBatch; j++)
            {
                EngineStores.Key(key, _randomKeys[j]);
                tree.Put(key, _value);
            }

            tx.Commit();
        }
    }

    [BenchmarkCategory("Durable single-put tx x1000"), Benchmark(Baseline = true)]
    public void DurableSinglePutSqlite()
    {
        using var inserter = new SqliteInserter(_sqlite!);
        for (var i = 0; i < DurableCount; i++)
        {
            using var tx = _sqlite!.BeginTransaction();
            inserter.Insert(tx, _randomKeys[i], _value);
            tx.Commit();
        }
    }

    [BenchmarkCategory("Durable single-put tx x1000"), Benchmark]
    public void DurableSinglePutJackdaw()
    {
        Span<byte> key = stackalloc byte[8];
        for (var i = 0; i < DurableCount; i++)
        {
            using var tx = _env!.BeginWrite();
            EngineStores.Key(key, _randomKeys[i]);
            tx.CreateTree("kv").Put(key, _value);
            tx.Commit();
        }
    }
}
