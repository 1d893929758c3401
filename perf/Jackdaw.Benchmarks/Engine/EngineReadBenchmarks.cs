using BenchmarkDotNet.Attributes;
using BenchmarkDotNet.Configs;
using Jackdaw.Storage.Engine;
using Microsoft.Data.Sqlite;

namespace Jackdaw.Benchmarks.Engine;

/// <summary>
/// Reads over 1M entries of 1 KiB (loaded once per process, flushed/checkpointed): random point
/// reads on a warm read transaction (SQLite: a prepared SELECT on an open connection) and a
/// 100k-entry range scan. Figures are per read / per scan.
/// </summary>
[MemoryDiagnoser]
[CategoriesColumn]
[GroupBenchmarksBy(BenchmarkLogicalGroupRule.ByCategory)]
[SimpleJob(launchCount: 1, warmupCount: 2, iterationCount: 5)]
public class EngineReadBenchmarks
{
    private const int Entries = 1_000_000;
    private const int Reads = 100_000;
    private const int ScanLength = 100_000;

    private readonly long[] _readKeys = new long[Reads];
    private readonly byte[] _buffer = new byte[EngineStores.ValueSize];
    private string? _jackdawFolder;
    private string? _sqliteFolder;
    private StorageEnvironment? _env;
    private ReadTransaction? _reader;
    private Tree? _tree;
    private SqliteConnection? _sqlite;
    private SqliteCommand? _select;
    private SqliteParameter? _selectKey;
    private SqliteCommand? _scan;
    private SqliteParameter? _scanStart;
    private long _scanFrom;

    [GlobalSetup]
    public void Setup()
    {
        var value = EngineStores.Value(1);
        _jackdawFolder = EngineStores.NewFolder("read-jackdaw");
        _env = EngineStores.OpenJackdaw(_jackdawFolder);
        Span<byte> key = stackalloc byte[8];
        for (var i = 0; i < Entries; i += 1000)
        {
            using var tx = _env.BeginWrite();
            var tree = tx.CreateTree("kv");
            for (var j = i; j < i + 1000; j++)
            {
                EngineStores.Key(key, j);
                tree.Put(key, value);
            }

            tx.Commit();
        }

        _env.Flush();
        _reader = _env.BeginRead();
        _tree = _reader.OpenTree("kv");

        _sqliteFolder = EngineStores.NewFolder("read-sqlite");
        _sqlite = EngineStores.OpenSqlite(_sqliteFolder);
        using (var inserter = new SqliteInserter(_sqlite))
        {
            for (var i = 0; i < Entries; i += 1000)
            {
                using var tx = _sqlite.BeginTransaction();
                for (var j = i; j < i + 1000; j++)
                {
                    inserter.Insert(tx, j, value);
                }

                tx.Commit();
            }
        }

        EngineStores.Execute(_sqlite, "PRAGMA wal_checkpoint(TRUNCATE);");
        _select = _sqlite.CreateCommand();
        _select.CommandText = "SELECT v FROM kv WHERE k = $k;";
        _selectKey = _select.Parameters.Add("$k", SqliteType.Integer);
        _select.Prepare();
        _scan = _sqlite.CreateCommand();
        _scan.CommandText = $"SELECT k, v FROM kv WHERE k >= $from ORDER BY k LIMIT {ScanLength};";
        _scanStart = _scan.Parameters.Add("$from", SqliteType.Integer);
        _scan.Prepare();

        var random = new Random(7);
        for (var i = 0; i < Reads; i++)
        {
            _readKeys[i] = random.Next(Entries);
        }

        _scanFrom = random.Next(Entries - ScanLength);
        if (PointReadsJackdaw() != PointReadsSqlite() || RangeScanJackdaw() != RangeScanSqlite())
        {
            throw new InvalidOperationException("The two stores disagree.");
        }
    }

    [GlobalCleanup]
    public void Cleanup()
    {
        _reader?.Dispose();
        _env?.Dispose();
        _select?.Dispose();
        _scan?.Dispose();
        _sqlite?.Dispose();
        SqliteConnection.ClearAllPools();
        EngineStores.DeleteFolder(_jackdawFolder);
        EngineStores.DeleteFolder(_sqliteFolder);
    }

    [BenchmarkCategory("Point read"), Benchmark(Baseline = true, OperationsPerInvoke = Reads)]
    public long PointReadsSqlite()
    {
        long sum = 0;
        foreach (var k in _readKeys)
        {
            _selectKey!.Value = k;
            using var reader = _select!.ExecuteReader();
            reader.Read();
            var n = reader.GetBytes(0, 0, _buffer, 0, _buffer.Length);
            sum += n + _buffer[0];
        }

        return sum;
    }

    [BenchmarkCategory("Point read"), Benchmark(OperationsPerInvoke = Reads)]
    public long PointReadsJackdaw()
    {
        long sum = 0;
        Span<byte> key = stackalloc byte[8];
        var tree = _tree!;
        foreach (var k in _readKeys)
        {
            EngineStores.Key(key, k);
            tree.TryGet(key, out var value);
            sum += value.Length + value[0];
        }

        return sum;
    }

    [BenchmarkCategory("Range scan 100k"), Benchmark(Baseline = true)]
    public long RangeScanSqlite()
    {
        long sum = 0;
        _scanStart!.Value = _scanFrom;
        using var reader = _scan!.ExecuteReader();
        while (reader.Read())
        {
            var n = reader.GetBytes(1, 0, _buffer, 0, _buffer.Length);
            sum += n + _buffer[0];
        }

        return sum;
    }

    [BenchmarkCategory("Range scan 100k"), Benchmark]
    public long RangeScanJackdaw()
    {
        long sum = 0;
        Span<byte> key = stackalloc byte[8];
        EngineStores.Key(key, _scanFrom);
        using var it = _tree!.Iterate();
        if (!it.Seek(key))
        {
            return 0;
        }

        var n = 0;
        do
        {
            var value = it.Value;
            sum += value.Length + value[0];
        }
        while (++n < ScanLength && it.MoveNext());

        return sum;
    }
}
